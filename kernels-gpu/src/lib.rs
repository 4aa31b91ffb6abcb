//! warpsort's device crate: warp primitives and sorting kernels written in
//! Rust, compiled to PTX by rustc's `nvptx64-nvidia-cuda` backend (see
//! `cargo xtask build-ptx`).
//!
//! Built for the host it is a plain `no_std` library exporting what host and
//! device share: the kernels' names ([`names`]), the launch constants and
//! shared-memory layouts ([`config`]) and the key encodings ([`ordered`]).
//! The kernels exist only in the nvptx build.
//!
//! Modules, from the bottom up: `arch` (the PTX instructions), `item` (what is
//! sorted), `warp` (primitives), `network` (the bitonic networks in
//! registers), `block_network` (stages through shared memory), `tile`
//! (loading tiles), then the kernels: `block_sort`, `bitonic`, `merge_path`
//! (the merge sort's split: merge-path searches, samples, partition),
//! `block_merge` (its merges in shared memory and step 1 by warp sorts and
//! merges), `warp_merge` (its warp bitonic merge), `segmented` (segmented
//! sorts: equal rows or segments given by offsets), `span` (a block's keys'
//! span, and the compact items a narrow one allows), `paper` (GPU-Warpsort as
//! published: the buffered warp merge, sampled splitters, independent final
//! merges), `checks`, `permute` (index sequences and gathers for argsort and
//! stable sorts), `presorted` (the order scan and the reversal of input
//! already in order), `probe`, and `custom` (keys of a user's type, ordered
//! by its `warpsort_key::Order`, for the builds of `warpsort-build`).
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        link_llvm_intrinsics,
        stdarch_nvptx,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        portable_simd,
        asm_experimental_arch
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![cfg_attr(all(not(target_arch = "nvptx64"), feature = "emulate"), feature(portable_simd))]
// Every `extern "ptx-kernel"` entry point has one contract, stated here once:
// its pointers address arrays of at least the lengths passed beside them, in
// the element types its name says, and it is launched with the shape its host
// launcher (in `warpsort`) uses. The kernels' doc comments say what they do.
#![allow(clippy::missing_safety_doc)]
#![deny(missing_docs)]

pub mod config;
pub mod names;
pub mod ordered;

/// Where this crate's source lies on the machine that compiled it:
/// `warpsort-build` compiles it again for a user's key type.
///
/// ```
/// assert!(std::path::Path::new(warpsort_kernels::SOURCE_DIR).join("src/custom.rs").exists());
/// ```
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Instantiates a kernel-defining macro for every key/payload type the host
/// offers: `$m!(KeyType, PayloadType, suffix)`; the suffix ends each kernel's
/// name. Payloads are moved, never compared: any 32-bit payload (`u32`, `i32`,
/// `f32`) uses the `u32` kernels, any 64-bit one the `u64` kernels.
#[cfg(all(target_arch = "nvptx64", not(warpsort_custom)))]
#[macro_export]
macro_rules! for_items {
    ($m:ident) => {
        $m!(u32, (), u32);
        $m!(u32, u32, u32_u32);
        $m!(u32, u64, u32_u64);
        $m!(u64, (), u64);
        $m!(u64, u32, u64_u32);
        $m!(u64, u64, u64_u64);
    };
}

/// Instantiates a kernel-defining macro for the ranked items of stable sorts
/// (`item::Ranked`: key, then input position), suffixes `u32_rank` and
/// `u64_rank`. Only the full sorts' kernels (block sort, bitonic, both merges)
/// exist for them.
#[cfg(all(target_arch = "nvptx64", not(warpsort_custom)))]
#[macro_export]
macro_rules! for_ranked {
    ($m:ident) => {
        $m!(u32, $crate::item::Rank, u32_rank);
        $m!(u64, $crate::item::Rank, u64_rank);
    };
}

/// Instantiates a kernel-defining macro for the items whose merge sort keeps
/// equal keys in input order by itself (`block_merge`'s stable step 1): the
/// built-in keys with 4-byte payloads, suffixes `u32_u32` and `u64_u32`.
#[cfg(all(target_arch = "nvptx64", not(warpsort_custom)))]
#[macro_export]
macro_rules! for_stable_tiles {
    ($m:ident) => {
        $m!(u32, u32, u32_u32);
        $m!(u64, u32, u64_u32);
    };
}

/// Built for a user's key type (`warpsort-build` sets `--cfg
/// warpsort_custom`): the kernels of its items only, suffixes `key`,
/// `key_u32`, `key_u64` (payloads as above).
#[cfg(all(target_arch = "nvptx64", warpsort_custom))]
#[macro_export]
macro_rules! for_items {
    ($m:ident) => {
        $m!($crate::custom::Custom<$crate::custom::UserKey>, (), key);
        $m!($crate::custom::Custom<$crate::custom::UserKey>, u32, key_u32);
        $m!($crate::custom::Custom<$crate::custom::UserKey>, u64, key_u64);
    };
}

/// Built for a user's key type: its ranked items, suffix `key_rank`.
#[cfg(all(target_arch = "nvptx64", warpsort_custom))]
#[macro_export]
macro_rules! for_ranked {
    ($m:ident) => {
        $m!($crate::custom::Custom<$crate::custom::UserKey>, $crate::item::Rank, key_rank);
    };
}

#[cfg(target_arch = "nvptx64")]
mod device {
    /// Every panic (an out-of-bounds index, an overflow check) ends the kernel.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        crate::arch::trap()
    }
}

/// Defines a kernel whose first four parameters are a source and a destination
/// item array (`src_keys, src_vals, dst_keys, dst_vals`), followed by `args`,
/// and which runs `call(src, dst, args...)`: the shape of every sort-tiles and
/// merge-pass entry point. With `+ samples`, two more parameters
/// (`sample_keys, sample_vals`: null keys for none) become the
/// `merge_path::Samples` passed last.
#[cfg(target_arch = "nvptx64")]
macro_rules! src_dst_kernel {
    ($export:expr, $(#[$m:meta])* fn $f:ident<$K:ty, $V:ty>($($arg:ident: $t:ty),*) => $call:expr) => {
        $(#[$m])*
        #[unsafe(export_name = $export)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $f(
            src_keys: *mut <$K as $crate::item::Key>::Mem,
            src_vals: *mut $V,
            dst_keys: *mut <$K as $crate::item::Key>::Mem,
            dst_vals: *mut $V,
            $($arg: $t),*
        ) {
            let src = $crate::item::Items { keys: src_keys, vals: src_vals };
            let dst = $crate::item::Items { keys: dst_keys, vals: dst_vals };
            // SAFETY: the host passes both arrays with `n` items, and the
            // rest (partition, shared memory) as the launcher documents.
            unsafe { $call(src, dst, $($arg),*) }
        }
    };
    ($export:expr, $(#[$m:meta])* fn $f:ident<$K:ty, $V:ty>($($arg:ident: $t:ty),*) + samples => $call:expr) => {
        src_dst_kernel!(
            $export,
            $(#[$m])*
            fn $f<$K, $V>($($arg: $t,)* sample_keys: *mut $K, sample_vals: *mut $V)
                => |src, dst, $($arg),*, sample_keys, sample_vals| $call(
                    src, dst, $($arg),*, $crate::merge_path::Samples { keys: sample_keys, vals: sample_vals }
                )
        );
    };
}

/// One module per width of a width list (`config::warp_sort_widths!` and
/// its kin), each holding `$kernel!(keys per lane, width in the name)`.
#[cfg(target_arch = "nvptx64")]
macro_rules! width_modules {
    ($kernel:ident; $(($module:ident, $k:literal, $w:literal)),*) => {
        $(
            #[doc = concat!("Kernels of width ", $w, ".")]
            pub mod $module {
                use super::*;
                $kernel!($k, $w);
            }
        )*
    };
}

/// Declares the modules that exist only in the nvptx build.
macro_rules! device_modules {
    ($($m:ident),* $(,)?) => { $( #[cfg(target_arch = "nvptx64")] pub mod $m; )* };
}
device_modules!(arch, bitonic, block_sort, custom, merge_path, permute, warp_merge);

/// Declares the modules of the nvptx build that also build on the host
/// under the emulator (feature `emulate`), so that their tests run on a CPU.
macro_rules! emulated_modules {
    ($($m:ident),* $(,)?) => {
        $( #[cfg(any(target_arch = "nvptx64", feature = "emulate"))] pub mod $m; )*
    };
}
emulated_modules!(block_network, item, network, tile, warp);

/// Declares the modules of the built-in kernels only: a build for a user's
/// key type (`warpsort_custom`) has the bitonic sorts, the merge sort by
/// bitonic tiles and warp bitonic merges (`splits` keeps its passes
/// permutations), and the permutations.
macro_rules! builtin_modules {
    ($($m:ident),* $(,)?) => { $( #[cfg(all(target_arch = "nvptx64", not(warpsort_custom)))] pub mod $m; )* };
}
builtin_modules!(block_merge, paper, probe);

/// Declares the modules of the built-in kernels that also build on the host
/// under the emulator (feature `emulate`; their entry points are the nvptx
/// build's alone), so that their tests run on a CPU.
macro_rules! builtin_emulated_modules {
    ($($m:ident),* $(,)?) => {
        $(
            #[cfg(any(
                all(target_arch = "nvptx64", not(warpsort_custom)),
                all(not(target_arch = "nvptx64"), feature = "emulate")
            ))]
            pub mod $m;
        )*
    };
}
builtin_emulated_modules!(checks, distribute, encode, presorted, segmented, span);

/// The PTX instructions emulated on the host (feature `emulate`): kernels
/// written against `arch` alone run there under [`arch::launch`].
#[cfg(all(not(target_arch = "nvptx64"), feature = "emulate"))]
#[path = "emu.rs"]
pub mod arch;

/// Declares the modules of a build for a user's key type only.
macro_rules! custom_modules {
    ($($m:ident),* $(,)?) => { $( #[cfg(all(target_arch = "nvptx64", warpsort_custom))] pub mod $m; )* };
}
custom_modules!(splits);
