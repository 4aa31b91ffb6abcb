//! A device array of keys (and payloads) as the kernels see it: raw pointers,
//! a length and the kernel-name suffix of its types.

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::gpu::{Arg, DevPtr, Gpu};
use crate::key::{Bits, Payload, SortKey};

/// Keys and optional payloads on the device.
#[derive(Clone, Debug)]
pub(crate) struct RawItems {
    pub keys: DevPtr,
    /// 0 for key-only.
    pub vals: DevPtr,
    pub n: usize,
    /// Kernel-name suffix: `u32`, `u32_u32`, `u64`, `u64_u32`.
    pub sfx: String,
    pub key_bytes: usize,
    pub val_bytes: usize,
}

impl RawItems {
    pub fn keys<K: SortKey>(gpu: &Gpu, keys: &CudaSlice<K>) -> Self {
        RawItems {
            keys: gpu.ptr(keys),
            vals: 0,
            n: keys.len(),
            sfx: <K::Bits as Bits>::SUFFIX.to_string(),
            key_bytes: std::mem::size_of::<K>(),
            val_bytes: 0,
        }
    }

    pub fn pairs<K: SortKey, V: Payload, S: DevicePtr<V>>(gpu: &Gpu, keys: &CudaSlice<K>, vals: &S) -> Self {
        let mut r = Self::keys(gpu, keys);
        r.vals = gpu.ptr(vals);
        r.sfx = format!("{}_{}", r.sfx, V::SUFFIX);
        r.val_bytes = std::mem::size_of::<V>();
        r
    }

    /// Bytes of one item in shared memory (the device's `Pair<K, V>`: padded
    /// to the key's alignment).
    pub fn item_bytes(&self) -> usize {
        (self.key_bytes + self.val_bytes).next_multiple_of(self.key_bytes)
    }

    /// The same types at other addresses.
    pub fn moved_to(&self, keys: DevPtr, vals: DevPtr) -> Self {
        RawItems { keys, vals: if self.vals == 0 { 0 } else { vals }, ..self.clone() }
    }

    pub fn kernel(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.sfx)
    }

    pub fn args(&self) -> [Arg; 2] {
        [Arg::U64(self.keys), Arg::U64(self.vals)]
    }
}
