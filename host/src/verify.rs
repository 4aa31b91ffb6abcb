//! Checking a result on the GPU without copying it back: sortedness by warp
//! vote, and a multiset fingerprint (sum of hashed key-value pairs) by warp
//! reduction, so that "sorted and same fingerprint as the input" verifies a sort.

use cudarc::driver::CudaSlice;
use warpsort_kernels::config::ELEMENTWISE_THREADS;

use crate::error::Result;
use crate::gpu::{Arg, Gpu, blocks_for};
use crate::items::RawItems;
use crate::key::{Order, Payload, SortKey};

/// What [`Gpu::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// Adjacent pairs out of order.
    pub descents: u64,
    /// Order-independent fingerprint of the (key, value) multiset.
    pub fingerprint: u64,
}

impl Check {
    /// Sorted, and the same items as `before`.
    pub fn confirms(&self, before: &Check) -> bool {
        self.descents == 0 && self.fingerprint == before.fingerprint
    }
}

impl Gpu {
    /// Counts descents of `keys` in `order` and fingerprints the keys with
    /// their values (if any).
    ///
    /// ```no_run
    /// use warpsort::Order;
    /// let gpu = warpsort::Gpu::new()?;
    /// let mut keys = gpu.stream().clone_htod(&[2u32, 1])?;
    /// let before = gpu.check::<u32, u32>(&keys, None, Order::Ascending)?;
    /// gpu.sort(&mut keys)?;
    /// assert!(gpu.check::<u32, u32>(&keys, None, Order::Ascending)?.confirms(&before));
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn check<K: SortKey, V: Payload>(
        &self,
        keys: &CudaSlice<K>,
        vals: Option<&CudaSlice<V>>,
        order: Order,
    ) -> Result<Check> {
        let items = match vals {
            Some(v) => RawItems::pairs(self, keys, v)?,
            None => RawItems::keys(self, keys)?,
        };
        // 16-bit keys are checked as their 32-bit patterns (mapped below).
        let wide = self.widen_keys(&items, 0)?;
        let items = wide.as_ref().map_or(items.clone(), |(_, w)| w.clone());
        // SAFETY: counters are zeroed by alloc_zeros.
        let counters = self.stream().alloc_zeros::<u64>(2)?;
        let c = self.ptr(&counters);
        if items.n > 0 {
            let [k, v] = items.args();
            let m = K::MODE | order.mode();
            let grid = blocks_for(items.n, ELEMENTWISE_THREADS).min(8192);
            self.launch(
                &items.kernel("verify"),
                grid,
                ELEMENTWISE_THREADS,
                0,
                &[k, v, Arg::U64(items.n as u64), Arg::U32(m), Arg::U64(c), Arg::U64(c + 8)],
            )?;
        }
        let host = self.stream().clone_dtoh(&counters)?;
        Ok(Check { descents: host[0] & 0xffff_ffff, fingerprint: host[1] })
    }

    /// Whether `keys` is sorted in `order`, checked on the GPU.
    pub fn is_sorted<K: SortKey>(&self, keys: &CudaSlice<K>, order: Order) -> Result<bool> {
        Ok(self.check::<K, u32>(keys, None, order)?.descents == 0)
    }
}
