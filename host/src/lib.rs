//! # warpsort
//!
//! GPU sorting written entirely in Rust: the kernels (`warpsort-kernels`) are
//! `no_std` Rust compiled to PTX by rustc's NVPTX backend; this crate embeds
//! that PTX and drives it through [`cudarc`] (dynamic loading, so building
//! needs no CUDA toolkit and no GPU).
//!
//! - [`Gpu::sort`], [`Gpu::sort_pairs`], [`Gpu::sort_slice`]: full sorts
//!   (GPU-Warpsort by default; bitonic sorts as [`Algorithm`]s).
//! - [`Gpu::argsort`] (`u32` positions), [`Gpu::argsort64`] (`u64`),
//!   [`Gpu::argsort_slice`]: the permutation that sorts keys.
//! - [`SortOptions::stable`]: equal keys keep their input order.
//! - [`Gpu::sort_segments`]: many equal-length rows at once (warp sort up to
//!   512 items, block sort up to 8192); [`Gpu::sort_segments_by_offsets`]:
//!   variable-length segments given by offsets (as CUB's `DeviceSegmentedSort`).
//! - [`Gpu::check_segments`], [`Gpu::is_sorted_segments`]: segmented checks on the GPU.
//! - [`Gpu::check`]: verify a result on the GPU.
//! - [`Scratch`], [`Gpu::sort_with_scratch`], [`Gpu::sort_temp_bytes`]:
//!   temporary storage the caller owns and reuses (plain calls reuse storage
//!   cached in the [`Gpu`]), and how much a sort needs.
//! - [`Error`]: every failure typed, with what to do; on error the caller's
//!   data is exactly as it was.
//! - Keys: `u32`, `i32`, `f32` (IEEE total order), `u64`, `i64`, `f64`, and
//!   `u16`/`i16` (widened to 32-bit patterns in scratch and narrowed back);
//!   payloads: any of those six types (32 or 64 bits).
//!
//! ```no_run
//! use warpsort::{Gpu, SortOptions, Order};
//! let gpu = Gpu::new()?;
//! let mut v: Vec<f32> = vec![2.0, -1.0, f32::NAN, 0.5];
//! gpu.sort_slice_with(&mut v, &SortOptions { order: Order::Descending, ..Default::default() })?;
//! assert!(v[0].is_nan());
//! # Ok::<(), warpsort::Error>(())
//! ```

pub mod cpu;
pub mod data;
mod error;
mod gpu;
mod items;
mod key;
mod narrow;
mod paper;
mod permute;
mod scratch;
mod segments;
mod sort;
pub mod verify;

pub use cudarc;
pub use error::{Error, Result};
pub use gpu::{DeviceInfo, Gpu, KernelArg, KernelTime, PTX_SM70, PTX_SM90};
pub use key::{Bits, Order, Payload, SortIndex, SortKey};
pub use paper::{PaperConfig, PaperLoads};
pub use permute::STABLE_MAX_LEN;
pub use scratch::Scratch;
pub use segments::{SegmentKernel, Segments};
pub use sort::{Algorithm, MergeKernel, SortOptions, TileSort, WarpsortConfig};
pub use verify::Check;
pub use warpsort_kernels as kernels;
