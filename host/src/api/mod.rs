//! The public operations, as methods of [`Gpu`]: full sorts of device
//! buffers (`sort`), of host slices (`slice`), argsort (`argsort`),
//! segmented sorts (`segments`) and the checks on the GPU (`check`). Every
//! operation plans first (its storage included), asks for its storage
//! before it touches the caller's data, and runs the plan.
//!
//! Device buffers are anything cudarc can hand out a device pointer for: a
//! whole [`CudaSlice`](cudarc::driver::CudaSlice), or a view of part of one
//! ([`CudaView`](cudarc::driver::CudaView) for what is only read,
//! [`CudaViewMut`](cudarc::driver::CudaViewMut) for what is sorted).

pub(crate) mod argsort;
pub(crate) mod check;
pub(crate) mod custom;
pub(crate) mod segments;
pub(crate) mod slice;
pub(crate) mod sort;
pub(crate) mod table;

use std::mem::size_of;

use cudarc::driver::{DevicePtr, DevicePtrMut, SyncOnDrop};
use warpsort_kernels::ordered::Fields;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::key::{Bits, Payload, SortKey};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;
use crate::plan::SortShape;
use sort::STABLE_MAX_LEN;

/// A caller's buffer's address on this GPU's stream, with the guard that
/// records (where the buffer's context tracks events) that the work queued
/// while it lives uses the buffer: keep it until the work is queued.
pub(crate) type Addr<'a> = (DevPtr, SyncOnDrop<'a>);

impl Gpu {
    /// The address of a buffer this operation writes, after checking that
    /// it lives in this GPU's context.
    pub(crate) fn addr_mut<'a, T>(&'a self, buf: &'a mut impl DevicePtrMut<T>, what: &'static str) -> Result<Addr<'a>> {
        self.check_context(buf, what)?;
        Ok(buf.device_ptr_mut(self.stream()))
    }

    /// The address of a buffer this operation only reads.
    pub(crate) fn addr<'a, T>(&'a self, buf: &'a impl DevicePtr<T>, what: &'static str) -> Result<Addr<'a>> {
        self.check_context(buf, what)?;
        Ok(buf.device_ptr(self.stream()))
    }
}

/// What sorting `n` keys of type `K` with payloads of type `V` (none for
/// `V = ()`) is, for the plans.
pub(crate) fn shape<K: SortKey>(val_bytes: usize) -> SortShape {
    SortShape { kind: ItemKind::new(size_of::<K::Bits>(), val_bytes), fields: K::FIELDS }
}

/// For keys wider than one word (`K::Bits` of several words), their
/// fields: they sort by `Gpu::sort_wide` and its kin. `None` for the rest.
pub(crate) fn wide<K: SortKey>() -> Option<Fields> {
    (K::Bits::WORDS > 1).then(|| K::FIELDS.expect("keys wider than a word are stored as fields"))
}

/// `n` keys of `K` at `keys` as the kernels see them (keys stored as fields
/// say their word: the plan encodes them), with values of `val_bytes` at
/// `vals`.
pub(crate) fn items<K: SortKey>(keys: DevPtr, vals: DevPtr, val_bytes: usize, n: usize) -> Items {
    Items::new(keys, vals, n, shape::<K>(val_bytes).kind)
}

/// Key-value operations take one value per key.
pub(crate) fn same_len(keys: usize, values: usize) -> Result<()> {
    if keys == values { Ok(()) } else { Err(Error::LengthMismatch { keys, values }) }
}

/// A key-value operation's buffers, checked (one value per key, a stable
/// sort within the ranks' limit, both in this GPU's context), as items.
pub(crate) struct Pairs<'a> {
    pub items: Items,
    pub shape: SortShape,
    pub val_bytes: usize,
    /// `K::MODE` and the order: how the keys map onto ordered patterns.
    pub mode: u32,
    _guards: [SyncOnDrop<'a>; 2],
}

impl Gpu {
    pub(crate) fn pairs<'a, K: SortKey, V: Payload>(
        &'a self,
        keys: &'a mut impl DevicePtrMut<K>,
        vals: &'a mut impl DevicePtrMut<V>,
        opts: &SortOptions,
    ) -> Result<Pairs<'a>> {
        let n = keys.len();
        same_len(n, vals.len())?;
        if opts.stable && n > STABLE_MAX_LEN {
            return Err(Error::TooLong { len: n, max: STABLE_MAX_LEN });
        }
        let (k, kg) = self.addr_mut(keys, "keys")?;
        let (v, vg) = self.addr_mut(vals, "values")?;
        let vb = val_bytes::<V>();
        Ok(Pairs {
            items: items::<K>(k, v, vb, n),
            shape: shape::<K>(vb),
            val_bytes: vb,
            mode: K::MODE | opts.order.mode(),
            _guards: [kg, vg],
        })
    }
}

/// The bytes of a payload type.
pub(crate) fn val_bytes<V: Payload>() -> usize {
    size_of::<V>()
}
