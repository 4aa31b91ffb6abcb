//! A device array of keys (and payloads) as the kernels see it: raw pointers,
//! a length and the kernel-name suffix of its types.

use cudarc::driver::CudaSlice;

use crate::error::Result;
use crate::gpu::{Arg, DevPtr, Gpu};
use crate::key::{Bits, Payload, SortKey};

/// Keys and optional payloads on the device.
#[derive(Clone, Debug)]
pub(crate) struct RawItems {
    pub keys: DevPtr,
    /// 0 for key-only.
    pub vals: DevPtr,
    pub n: usize,
    /// Kernel-name suffix: key bits, then payload bits (`u32`, `u32_u64`,
    /// …) or `rank` for the stable sorts' ranked items (`u32_rank`).
    pub sfx: String,
    pub key_bytes: usize,
    pub val_bytes: usize,
}

impl RawItems {
    /// Device keys; a `ForeignContext` error when they live in another context.
    pub fn keys<K: SortKey>(gpu: &Gpu, keys: &CudaSlice<K>) -> Result<Self> {
        gpu.check_context(keys, "keys")?;
        Ok(Self::keys_at::<K>(gpu.ptr(keys), keys.len()))
    }

    /// Device keys and values (of the same length: callers check).
    pub fn pairs<K: SortKey, V: Payload>(gpu: &Gpu, keys: &CudaSlice<K>, vals: &CudaSlice<V>) -> Result<Self> {
        gpu.check_context(vals, "values")?;
        Ok(Self::keys(gpu, keys)?.with_vals_at::<V>(gpu.ptr(vals)))
    }

    /// `n` keys of type `K` at device address `keys`.
    pub fn keys_at<K: SortKey>(keys: DevPtr, n: usize) -> Self {
        RawItems {
            keys,
            vals: 0,
            n,
            sfx: <K::Bits as Bits>::SUFFIX.to_string(),
            key_bytes: std::mem::size_of::<K>(),
            val_bytes: 0,
        }
    }

    /// The same keys with values of type `V` at device address `vals`.
    pub fn with_vals_at<V: Payload>(mut self, vals: DevPtr) -> Self {
        self.vals = vals;
        self.sfx = format!("{}_{}", self.sfx, V::SUFFIX);
        self.val_bytes = std::mem::size_of::<V>();
        self
    }

    /// The same keys with `u32` ranks at device address `ranks`: the items
    /// of a stable sort (the device's `Ranked<K>`: key, then rank).
    pub fn with_ranks_at(mut self, ranks: DevPtr) -> Self {
        self.vals = ranks;
        self.sfx = format!("{}_rank", self.sfx);
        self.val_bytes = 4;
        self
    }

    /// Bytes of one item in shared memory (the device's `Pair<K, V>`: its
    /// size rounded up to its alignment, the larger of key and payload).
    pub fn item_bytes(&self) -> usize {
        crate::sort::item_bytes(self.key_bytes, self.val_bytes)
    }

    /// The same types at other addresses.
    pub fn moved_to(&self, keys: DevPtr, vals: DevPtr) -> Self {
        RawItems { keys, vals: if self.vals == 0 { 0 } else { vals }, ..self.clone() }
    }

    /// Items `start..start + len` of the same arrays.
    pub fn range(&self, start: usize, len: usize) -> Self {
        let vals = if self.vals == 0 { 0 } else { self.vals + (start * self.val_bytes) as u64 };
        RawItems { keys: self.keys + (start * self.key_bytes) as u64, vals, n: len, ..self.clone() }
    }

    pub fn kernel(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.sfx)
    }

    pub fn args(&self) -> [Arg; 2] {
        [Arg::U64(self.keys), Arg::U64(self.vals)]
    }
}
