//! GPU-Warpsort as published (Ye et al. 2010): the paper's four steps with
//! its parameters `t`, `l`, `s` and `k` ([`PaperConfig`]), selectable as
//! [`Algorithm::WarpsortPaper`](crate::Algorithm::WarpsortPaper) beside the
//! tuned pipeline. The device side is `warpsort_kernels::paper`.

use warpsort_kernels::config::{
    PAPER_BUFFERS, PAPER_DEFAULT_BUFFER, PAPER_DEFAULT_GROUPS, PAPER_DEFAULT_OVERSAMPLING, PAPER_DEFAULT_SEQUENCES,
    PAPER_MAX_SAMPLES, PAPER_THREADS, PAPER_TILE, WARP_SIZE,
};

use crate::error::{Error, Result};
use crate::gpu::{Arg, DevPtr, Gpu, blocks_for};
use crate::items::RawItems;
use crate::sort::NO_SAMPLES;

/// How step 2 and step 4 load the chunk they reverse into the buffer (the
/// paper's Fig. 5 and Fig. 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PaperLoads {
    /// Lane `i` reads element `i` and the warp reverses the chunk in
    /// registers (`shfl.sync.bfly 31`): Fig. 5(b), the paper's choice.
    #[default]
    Coalesced,
    /// Lane `i` reads element `31 - i` directly: Fig. 5(a). On the paper's
    /// GPU this split every access into 32 transactions; from Fermi on a
    /// warp's reversed access touches the same sectors.
    Reversed,
}

/// The paper's parameters; zero picks the default.
///
/// ```
/// use warpsort::PaperConfig;
/// let c = PaperConfig::default();
/// assert_eq!((c.buffer(), c.sequences(), c.groups(), c.oversampling()), (64, 512, 1024, 8));
/// assert!(c.validate().is_ok());
/// assert!(PaperConfig { buffer: 96, ..c }.validate().is_err());
/// assert!(PaperConfig { groups: 4096, oversampling: 4, ..c }.validate().is_err()); // 16384 samples
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PaperConfig {
    /// `t`: items in a warp's merge buffer, 64 or 128 (0: 64).
    pub buffer: u32,
    /// `l`: sequences left when step 2 stops, a power of two of at least 2
    /// (0: 512). The paper wants more than the GPU has SMs.
    pub sequences: usize,
    /// `s`: groups step 3 cuts every sequence into (0: 1024).
    pub groups: usize,
    /// `k`: samples per splitter (0: 8); `s * k` may not pass 8192.
    pub oversampling: usize,
    /// Step 2 and 4 loads.
    pub loads: PaperLoads,
}

impl PaperConfig {
    /// `t`, the default filled in.
    pub fn buffer(&self) -> u32 {
        if self.buffer == 0 { PAPER_DEFAULT_BUFFER } else { self.buffer }
    }
    /// `l`, the default filled in.
    pub fn sequences(&self) -> usize {
        if self.sequences == 0 { PAPER_DEFAULT_SEQUENCES as usize } else { self.sequences }
    }
    /// `s`, the default filled in.
    pub fn groups(&self) -> usize {
        if self.groups == 0 { PAPER_DEFAULT_GROUPS as usize } else { self.groups }
    }
    /// `k`, the default filled in.
    pub fn oversampling(&self) -> usize {
        if self.oversampling == 0 { PAPER_DEFAULT_OVERSAMPLING as usize } else { self.oversampling }
    }

    /// Checks the parameters ([`Error::BadConfig`] says which are wrong).
    pub fn validate(&self) -> Result<()> {
        let buffers = PAPER_BUFFERS;
        let l = self.sequences();
        let ok = buffers.contains(&self.buffer())
            && l.is_power_of_two()
            && l >= 2
            && self.groups() >= 2
            && self.groups() * self.oversampling() <= PAPER_MAX_SAMPLES as usize;
        if !ok {
            return Err(Error::BadConfig(format!(
                "{self:?}: buffer must be 0 or one of {buffers:?}, sequences 0 or a power of two from 2, groups 0 or at least 2, and groups * oversampling at most {PAPER_MAX_SAMPLES}"
            )));
        }
        Ok(())
    }
}

/// The paper's temporary storage for `n` items (each piece 256-byte
/// aligned): the second buffer of the merge passes (the paper's `2n`), then
/// the `c` of `2n + c`: samples, the split's bounds, the pieces' starts and
/// the groups' offsets.
pub(crate) struct PaperLayout {
    vals: usize,
    sample_keys: usize,
    sample_vals: usize,
    bounds: usize,
    starts: usize,
    offsets: usize,
    /// All of it.
    pub bytes: usize,
    /// The shape: sequences after step 2 (`l`, at most the configured one)
    /// and the step-2 passes.
    l: usize,
    passes: u32,
}

impl PaperLayout {
    pub(crate) fn new(cfg: &PaperConfig, n: usize, key_bytes: usize, val_bytes: usize) -> Self {
        let aligned = |b: usize| b.next_multiple_of(256);
        let (s, m) = (cfg.groups(), cfg.groups() * cfg.oversampling());
        let tiles = n.div_ceil(PAPER_TILE as usize);
        let passes = tiles.next_power_of_two().trailing_zeros().saturating_sub(cfg.sequences().trailing_zeros());
        let run = (PAPER_TILE as usize) << passes;
        let l = n.div_ceil(run);
        // The split's arrays are sized for `min(tiles, configured l)`, at
        // least `l` and growing with `n` (`l` itself drops where the passes
        // step up): scratch reserved for `n` items serves every shorter sort.
        let l_room = tiles.min(cfg.sequences());
        let vals = aligned(n * key_bytes);
        let sample_keys = vals + aligned(n * val_bytes);
        let sample_vals = sample_keys + aligned(m * key_bytes);
        let bounds = sample_vals + aligned(m * val_bytes);
        let starts = bounds + aligned((s + 1) * l_room * 8);
        let offsets = starts + aligned(s * (l_room + 1) * 8);
        let bytes = offsets + s * 8;
        PaperLayout { vals, sample_keys, sample_vals, bounds, starts, offsets, bytes, l, passes }
    }

    /// Step-4 levels (the merge tree of `l` pieces).
    fn levels(&self) -> u32 {
        self.l.next_power_of_two().trailing_zeros()
    }
}

impl Gpu {
    /// GPU-Warpsort's four steps as published, on `items`, with `temp`
    /// holding a [`PaperLayout`].
    pub(crate) fn warpsort_paper(&self, items: &RawItems, cfg: &PaperConfig, temp: DevPtr) -> Result<()> {
        let n = items.n;
        let tile = PAPER_TILE as usize;
        if n <= tile {
            return self.block_sort(items, items, tile, tile, NO_SAMPLES);
        }
        let at = PaperLayout::new(cfg, n, items.key_bytes, items.val_bytes);
        let tmp = items.moved_to(temp, temp + at.vals as u64);
        let (s, k) = (cfg.groups(), cfg.oversampling());
        let m = s * k;
        let samples = items.moved_to(temp + at.sample_keys as u64, temp + at.sample_vals as u64).range(0, m);
        let split = at.l > 1;
        // Step 3's samples come from the input, before step 1 moves it.
        if split {
            let [ik, iv] = items.args();
            let [sk, sv] = samples.args();
            let grid = blocks_for(m, PAPER_THREADS);
            self.launch(
                &items.kernel("paper_sample"),
                grid,
                PAPER_THREADS,
                0,
                &[ik, iv, Arg::U64(n as u64), sk, sv, Arg::U64(m as u64)],
            )?;
            let sample_tile = m.next_power_of_two().max(tile);
            self.block_sort(&samples, &samples, sample_tile, sample_tile, NO_SAMPLES)?;
        }
        // Step 1 writes where the last write (of step 2 or step 4) ends in `items`.
        let writes = at.passes + if split { at.levels() } else { 0 };
        let (mut cur, mut other) = if writes % 2 == 1 { (tmp, items.clone()) } else { (items.clone(), tmp) };
        self.block_sort(items, &cur, tile, tile, NO_SAMPLES)?;
        let t = cfg.buffer();
        let coalesced = Arg::U32((cfg.loads == PaperLoads::Coalesced) as u32);
        let warps_grid = |warps: usize| blocks_for(warps, PAPER_THREADS / WARP_SIZE);
        // Step 2: merge passes until `l` sequences are left.
        let mut run = tile;
        for _ in 0..at.passes {
            let [sk, sv] = cur.args();
            let [dk, dv] = other.args();
            let args = [sk, sv, dk, dv, Arg::U64(n as u64), Arg::U64(run as u64), coalesced];
            let grid = warps_grid(n.div_ceil(2 * run));
            self.launch(&items.kernel(&format!("paper_merge{t}")), grid, PAPER_THREADS, 0, &args)?;
            std::mem::swap(&mut cur, &mut other);
            run *= 2;
        }
        if !split {
            return Ok(());
        }
        // Step 3: cut every sequence at the splitters.
        let (l, u) = (at.l, |x: usize| Arg::U64(x as u64));
        let table = |offset: usize| Arg::U64(temp + offset as u64);
        let [ck, cv] = cur.args();
        let [sk, sv] = samples.args();
        let args = [ck, cv, u(n), u(run), u(l), sk, sv, u(s), u(k), table(at.bounds)];
        self.launch(&items.kernel("paper_split"), blocks_for((s + 1) * l, PAPER_THREADS), PAPER_THREADS, 0, &args)?;
        let args = [table(at.bounds), u(l), u(s), table(at.starts), table(at.offsets)];
        self.launch("paper_group_starts", warps_grid(s), PAPER_THREADS, 0, &args)?;
        // Step 4: every group's pieces merged pairwise, a level per launch.
        for round in 0..at.levels() {
            let [sk, sv] = cur.args();
            let [dk, dv] = other.args();
            let pairs = l.div_ceil(1 << round).div_ceil(2);
            let args = [
                sk,
                sv,
                dk,
                dv,
                u(run),
                u(l),
                table(at.bounds),
                table(at.starts),
                table(at.offsets),
                u(s),
                Arg::U32(round),
                coalesced,
            ];
            self.launch(&items.kernel(&format!("paper_final{t}")), warps_grid(s * pairs), PAPER_THREADS, 0, &args)?;
            std::mem::swap(&mut cur, &mut other);
        }
        Ok(())
    }
}
