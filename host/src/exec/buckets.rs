//! Buckets of sorted runs on the GPU (the distributed sort's, a host sort's
//! that fits the GPU once): regular samples taken from each run, and where
//! each splitter (`plan::splitters`) falls in a run, searched there.

use cudarc::driver::DeviceRepr;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::launch::DevPtr;
use crate::launch::ItemKind;
use crate::launch::families::SearchBounds;
use crate::plan::splitters::{Query, Splitter, query};

impl Gpu {
    /// Queues the gather of the keys (`kb` bytes each) at `positions` of
    /// `keys` into `out`, by `u32` indices from each 2^32-key part.
    pub(crate) fn take_samples(&self, keys: DevPtr, kb: usize, positions: &[usize], out: DevPtr) -> Result<()> {
        let mut taken = 0;
        for part in positions.chunk_by(|a, b| a >> 32 == b >> 32) {
            let base = (part[0] >> 32 << 32) * kb;
            let idx: Vec<u32> = part.iter().map(|&i| i as u32).collect();
            let idx = self.stream().clone_htod(&idx)?;
            self.gather_values(kb, keys + base as u64, self.ptr(&idx), out + (taken * kb) as u64, part.len())?;
            taken += part.len();
        }
        Ok(())
    }

    /// Where each bucket ends in run `me`'s `n` sorted keys (ordered
    /// patterns of `kb` bytes at `keys`), searched on the GPU; the last end
    /// is `n` (as `splitters::bucket_ends` on the CPU).
    pub(crate) fn bucket_ends<B: DeviceRepr + Copy>(
        &self,
        me: usize,
        keys: DevPtr,
        n: usize,
        kb: usize,
        cuts: &[Option<Splitter<B>>],
    ) -> Result<Vec<usize>> {
        let queries: Vec<Query<B>> = cuts.iter().map(|&c| query(me, c)).collect();
        let (mut wanted, mut upper) = (Vec::new(), Vec::new());
        for q in &queries {
            if let Query::Search { key, upper: u } = *q {
                wanted.push(key);
                upper.push(u as u32);
            }
        }
        let mut found = vec![0u64; wanted.len()];
        if !wanted.is_empty() {
            let (dk, du) = (self.stream().clone_htod(&wanted)?, self.stream().clone_htod(&upper)?);
            let out = self.stream().alloc_zeros::<u64>(wanted.len())?;
            let search = SearchBounds {
                word: ItemKind::new(kb, 0),
                keys,
                n,
                queries: self.ptr(&dk),
                upper: self.ptr(&du),
                q: wanted.len(),
                out: self.ptr(&out),
            };
            self.launch(&search, self.policy().elementwise(wanted.len()))?;
            self.download(self.ptr(&out), &mut found)?;
        }
        let mut found = found.into_iter();
        let mut ends: Vec<usize> = queries
            .iter()
            .map(|q| match *q {
                Query::At(pos) => pos,
                Query::Search { .. } => found.next().map_or(0, |x| x as usize),
                Query::End => n,
            })
            .collect();
        ends.push(n);
        Ok(ends)
    }
}
