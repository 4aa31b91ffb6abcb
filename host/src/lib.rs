//! # warpsort
//!
//! GPU sorting written entirely in Rust: the kernels (`warpsort-kernels`) are
//! `no_std` Rust compiled to PTX by rustc's NVPTX backend; this crate embeds
//! them and drives them through [`cudarc`] (dynamic loading, so building
//! needs no CUDA toolkit and no GPU).
//!
//! - [`Gpu::sort`], [`Gpu::sort_pairs`], [`Gpu::sort_slice`]: full sorts
//!   (by default the merge sort or the sample sort, whichever the GPU's
//!   table says is faster for the keys and their number; each alone,
//!   bitonic sorts and GPU-Warpsort as published as [`Algorithm`]s).
//! - [`Gpu::argsort`] (`u32` positions), [`Gpu::argsort64`] (`u64`),
//!   [`Gpu::argsort_slice`]: the permutation that sorts keys.
//! - [`SortOptions::stable`]: equal keys keep their input order.
//! - [`Gpu::sort_segments`]: many equal-length rows at once (as
//!   `torch.sort` along the last dimension); [`Gpu::sort_segments_by_offsets`]:
//!   variable-length segments given by offsets (as CUB's
//!   `DeviceSegmentedSort`); keys, key-value (stable or not) and argsort
//!   ([`Gpu::argsort_segments`]), segments of any length.
//! - [`Gpu::check`], [`Gpu::check_segments`]: verify a result on the GPU.
//! - [`Scratch`], [`Gpu::sort_with_scratch`], [`Gpu::sort_temp_bytes`]:
//!   temporary storage the caller owns and reuses (plain calls reuse storage
//!   cached in the [`Gpu`]), and how much a sort needs.
//! - [`Error`]: every failure typed, with what to do; on error the caller's
//!   data is exactly as it was.
//! - Keys: `u32`, `i32`, `f32` (IEEE total order), `u64`, `i64`, `f64`, and
//!   `u16`/`i16` (encoded into 32-bit patterns in scratch and decoded back);
//!   composite keys: [`Tuple`]s of two or three [`Field`]s (each ascending
//!   or `std::cmp::Reverse`), byte strings `[u8; 4 | 8 | 16 | 32]`;
//!   payloads: any of those six types (32 or 64 bits). Device buffers: a
//!   whole `CudaSlice` or a view of part of one.
//! - [`Gpu::order_by`] ([`Column`]): ORDER BY on a table of device columns,
//!   a stable permutation; [`Gpu::gather`] moves any column by it.
//! - Key types written by the user: a `no_std` crate implements
//!   [`warpsort_key::Order`] for its `Copy` struct (`#[derive(Order)]` for
//!   a field-by-field order, a hand-written `less` otherwise), `warpsort-build` compiles
//!   the kernels for it from `build.rs`, [`Gpu::with_key_kernels`] loads them
//!   and [`Gpu::sort_custom`], [`Gpu::sort_custom_pairs`],
//!   [`Gpu::argsort_custom`], [`Gpu::sort_custom_slice`] sort by its `less`.
//!
//! ```no_run
//! use warpsort::{Gpu, SortOptions, Order};
//! let gpu = Gpu::new()?;
//! let mut v: Vec<f32> = vec![2.0, -1.0, f32::NAN, 0.5];
//! gpu.sort_slice_with(&mut v, &SortOptions { order: Order::Descending, ..Default::default() })?;
//! assert!(v[0].is_nan());
//! # Ok::<(), warpsort::Error>(())
//! ```
//!
//! How the crate is built, bottom up: `launch` (every kernel family's name
//! and typed arguments), `policy` (the tuning tables per device class),
//! `plan` (every decision of an operation resolved once: kernels, launch
//! shapes, temporary storage), `gpu` (the handle: module, launches,
//! temporary storage), `exec` (the launchers that run a plan), `api` (the
//! public operations).

mod api;
mod derived;
mod dist;
mod error;
mod exec;
mod gpu;
mod hostsort;
mod key;
mod launch;
mod options;
mod plan;
mod policy;
pub mod trace;

pub use api::check::{Check, Segments};
pub use api::sort::STABLE_MAX_LEN;
pub use api::table::Column;
pub use cudarc;
pub use dist::{Balance, Cluster, DistOptions, DistReport, NcclId, Peer};
pub use error::{Error, Result};
pub use gpu::scratch::Scratch;
pub use gpu::{DeviceInfo, Gpu, KernelArg, KernelTime};
pub use hostsort::{Fault, HostOptions, Phase, Progress};
pub use key::{Bits, Field, Order, Payload, SortIndex, SortKey, Tuple, width};
pub use options::{
    Algorithm, MergeKernel, MergeSortConfig, PaperConfig, PaperLoads, Presorted, SampleSortConfig, SegmentKernel,
    SortOptions, TileSort,
};
pub use warpsort_kernels as kernels;
pub use warpsort_key;
