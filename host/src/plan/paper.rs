//! The plan of GPU-Warpsort as published: its parameters `t`, `l`, `s`, `k`
//! resolved, the shape of its steps for `n` items, and its temporary storage
//! (the paper's `2n + c`).

use warpsort_kernels::config::{KEYS_PER_LANE, PAPER_TILE, WARP_TILE};

use super::Launch;
use super::layout::Layout;
use crate::error::Result;
use crate::launch::{Family, ItemKind, KernelId, Shape};
use crate::options::{PaperConfig, PaperLoads};
use crate::policy::Policy;

/// The paper's temporary storage, as offsets from its base: the second
/// buffer of the merge passes (the paper's `2n`), then the `c` of `2n + c`:
/// samples, the split's bounds, the pieces' starts and the groups' offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PaperRegions {
    pub keys: usize,
    pub vals: usize,
    pub sample_keys: usize,
    pub sample_vals: usize,
    pub bounds: usize,
    pub starts: usize,
    pub offsets: usize,
}

/// Every decision of one sort as published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PaperPlan {
    /// `t`, the merge buffer.
    pub buffer: u32,
    /// `s` groups and `k` samples per splitter.
    pub groups: usize,
    pub oversampling: usize,
    pub coalesced: bool,
    /// Step-2 passes, and the sequences `l` left after them (at most the
    /// configured `l`); steps 3 and 4 run when more than one is left.
    pub passes: u32,
    pub sequences: usize,
    /// Threads per block of the merge kernels (a warp per merge).
    pub threads: u32,
    /// The block sort of the `s * k` samples: its tile.
    pub sample_tile: usize,
    pub regions: PaperRegions,
    pub temp_bytes: usize,
}

impl PaperPlan {
    pub fn new(cfg: &PaperConfig, kind: ItemKind, n: usize, p: &Policy) -> Result<Self> {
        cfg.validate()?;
        let (s, k) = (cfg.groups(), cfg.oversampling());
        let m = s * k;
        let tile = PAPER_TILE as usize;
        let tiles = n.div_ceil(tile);
        let passes = tiles.next_power_of_two().trailing_zeros().saturating_sub(cfg.sequences().trailing_zeros());
        let sequences = n.div_ceil(tile << passes);
        // The split's arrays are sized for `min(tiles, configured l)`: at
        // least `l` and growing with `n` (`l` itself drops where the passes
        // step up), so storage reserved for `n` items serves every shorter sort.
        let l_room = tiles.min(cfg.sequences());
        let mut l = Layout::default();
        let (keys, vals) = l.items(n, kind);
        let (sample_keys, sample_vals) = l.items(m, kind);
        let bounds = l.region((s + 1) * l_room * 8);
        let starts = l.region(s * (l_room + 1) * 8);
        let offsets = l.region(s * 8);
        let regions = PaperRegions { keys, vals, sample_keys, sample_vals, bounds, starts, offsets };
        Ok(PaperPlan {
            buffer: cfg.buffer(),
            groups: s,
            oversampling: k,
            coalesced: cfg.loads == PaperLoads::Coalesced,
            passes,
            sequences,
            threads: p.paper_threads,
            sample_tile: m.next_power_of_two().max(tile),
            regions,
            temp_bytes: if n > tile { l.bytes() } else { 0 },
        })
    }

    /// Whether steps 3 and 4 run (more than one sequence after step 2).
    pub fn splits(&self) -> bool {
        self.sequences > 1
    }

    /// Step-4 levels (the merge tree of `l` pieces).
    pub fn levels(&self) -> u32 {
        self.sequences.next_power_of_two().trailing_zeros()
    }

    /// Step 1's block sort: a warp per tile.
    pub fn tile_shape(&self, n: usize, kind: ItemKind) -> Shape {
        let tile = WARP_TILE as usize;
        Shape::new(n.div_ceil(tile) as u32, WARP_TILE / KEYS_PER_LANE).with_smem((tile * kind.item_bytes()) as u32)
    }

    /// The samples' block sort.
    pub fn sample_shape(&self, kind: ItemKind) -> Shape {
        Shape::new(1, (self.sample_tile / KEYS_PER_LANE as usize) as u32)
            .with_smem((self.sample_tile * kind.item_bytes()) as u32)
    }

    /// Every kernel this sort launches (the ones with large blocks matter).
    pub fn launches(&self, n: usize, kind: ItemKind, out: &mut Vec<Launch>) {
        out.push((KernelId::new(Family::BlockSort, kind), self.tile_shape(n, kind)));
        if n > PAPER_TILE as usize && self.splits() {
            out.push((KernelId::new(Family::BlockSort, kind), self.sample_shape(kind)));
        }
    }
}
