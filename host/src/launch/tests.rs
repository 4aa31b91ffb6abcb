//! Every kernel the host can launch, held against the PTX it embeds: the
//! name exists, and the parameters agree in number, order and kind (a
//! pointer, a 64-bit or a 32-bit scalar). No GPU needed.

use std::collections::BTreeMap;

use warpsort_kernels::config::{
    BLOCK_MERGE_KEYS_PER_THREAD, MERGE_KEYS_PER_LANE, PAPER_BUFFERS, WARP_SIZE, WARP_SORT_KEYS_PER_LANE,
    WARP_SORT_MAX_SEGMENT, compact_words,
};
use warpsort_kernels::ordered::{Fields, View, mode};

use super::families::*;
use super::*;

/// `.entry` name -> its parameters' kinds (`ptr`, `u64`, `u32`): the
/// `.param` lines of its header ([`bodies`], up to the `)` that ends it).
fn entries(ptx: &str) -> BTreeMap<String, Vec<&'static str>> {
    let kind = |p: &str| match p {
        p if p.starts_with(".u64 .ptr") => "ptr",
        p if p.starts_with(".u64") => "u64",
        p if p.starts_with(".u32") => "u32",
        p => panic!("unexpected parameter {p}"),
    };
    bodies(ptx)
        .into_iter()
        .map(|(name, body)| {
            let header = body.iter().take_while(|l| !l.starts_with(')'));
            (name, header.filter_map(|l| l.strip_prefix(".param ")).map(kind).collect())
        })
        .collect()
}

fn kinds(params: &[Param]) -> Vec<&'static str> {
    params
        .iter()
        .map(|p| match p {
            Param::Ptr(_) => "ptr",
            Param::U64(_) => "u64",
            Param::U32(_) => "u32",
        })
        .collect()
}

const PLAIN: [ItemKind; 6] =
    [ItemKind::U32, ItemKind::U32U32, ItemKind::U32U64, ItemKind::U64, ItemKind::U64U32, ItemKind::U64U64];
const WORDS: [ItemKind; 2] = [ItemKind::U32, ItemKind::U64];

/// One launch of every kernel the host launches, every width and item kind.
fn every_launch() -> Vec<Box<dyn Kernel>> {
    let mut all: Vec<Box<dyn Kernel>> = Vec::new();
    let rows = Segments::Rows { n: 10, len: 3 };
    for kind in ItemKind::ALL {
        // Leaked so that the argument structs can borrow them for the test's length.
        let it: &'static Items = Box::leak(Box::new(Items::new(1, 2, 10, kind)));
        let s = Samples::NONE;
        all.push(Box::new(BlockSort { src: it, dst: it, seg: 4, samples: s }));
        all.push(Box::new(MergeTileSort { src: it, dst: it, tile: 4, stable: false, samples: s }));
        if crate::plan::merge_sort::STABLE_TILE_KINDS.contains(&kind) {
            all.push(Box::new(MergeTileSort { src: it, dst: it, tile: 4, stable: true, samples: s }));
        }
        all.push(Box::new(MergePartition { items: it, samples: s, run: 1, split: 1, window: 2, parts: 3, pairs: 4 }));
        for outputs in BLOCK_MERGE_KEYS_PER_THREAD {
            all.push(Box::new(BlockMerge { outputs, src: it, dst: it, run: 1, split: 1, parts: 2, samples: s }));
            let merge = BlockMerge { outputs, src: it, dst: it, run: 1, split: 1, parts: 2, samples: s };
            all.push(Box::new(BlockMergeFrom { merge, first: 3, pairs: 4 }));
        }
        for k in MERGE_KEYS_PER_LANE {
            all.push(Box::new(WarpMergePass { window: WARP_SIZE * k, src: it, dst: it, run: 1, parts: 2 }));
        }
        all.push(Box::new(BitonicStage { items: it, log_s: 1, log_j: 0 }));
        for stages in [2, 3] {
            all.push(Box::new(BitonicHalfCleaners { stages, items: it, log_j: 3 }));
            all.push(Box::new(BitonicFlip { stages, items: it, log_s: 3 }));
        }
        all.push(Box::new(BitonicFused { items: it }));
        for buffer in PAPER_BUFFERS {
            all.push(Box::new(PaperMerge { buffer, src: it, dst: it, run: 1, coalesced: true }));
            let tables = PaperTables { bounds: 1, starts: 2, offsets: 3 };
            let (sequences, groups) = (2, 2);
            all.push(Box::new(PaperFinal {
                buffer,
                src: it,
                dst: it,
                run: 1,
                sequences,
                tables,
                groups,
                round: 0,
                coalesced: true,
            }));
        }
        all.push(Box::new(PaperSample { items: it, samples: it }));
        all.push(Box::new(PaperSplit {
            items: it,
            run: 1,
            sequences: 2,
            samples: it,
            groups: 2,
            oversampling: 2,
            bounds: 3,
        }));
        // The sample sort's buckets of 8-byte items take the kernels told their spans.
        let told = Some(KnownSpans { spans: 8, ids: 9 });
        let spans = |stable: bool| {
            let takes = compact_words(kind.item_bytes() as u32);
            [None].into_iter().chain(takes.then_some(told)).map(move |known| (stable, known))
        };
        if PLAIN.contains(&kind) {
            for (stable, known) in spans(false) {
                all.push(Box::new(SegmentedChunks { items: it, segments: rows, chunk: 8, stable, known }));
                all.push(Box::new(SegmentedBlock { items: it, segments: rows, stable, known, dual: false }));
                for k in WARP_SORT_KEYS_PER_LANE {
                    // The size classes take one warp width (`SegmentKernel::for_class`).
                    if known.is_some() && WARP_SIZE * k != WARP_SORT_MAX_SEGMENT {
                        continue;
                    }
                    let width = WARP_SIZE * k;
                    all.push(Box::new(SegmentedWarp { width, items: it, segments: rows, stable, known }));
                }
            }
        }
        if kind == ItemKind::U32 {
            // The largest tiles of `u32` keys (`Policy::dual_block_min_tile`).
            all.push(Box::new(SegmentedBlock { items: it, segments: rows, stable: false, known: None, dual: true }));
        }
        if crate::plan::merge_sort::STABLE_TILE_KINDS.contains(&kind) {
            for (stable, known) in spans(true) {
                all.push(Box::new(SegmentedChunks { items: it, segments: rows, chunk: 8, stable, known }));
                all.push(Box::new(SegmentedBlock { items: it, segments: rows, stable, known, dual: false }));
                let width = WARP_SORT_MAX_SEGMENT;
                all.push(Box::new(SegmentedWarp { width, items: it, segments: rows, stable, known }));
            }
        }
        if PLAIN.contains(&kind) {
            all.push(Box::new(Verify { items: it, mode: 0, descents: 1, sum: 2 }));
        }
        for view in [View::IDENTITY, View::of_mode(mode::FLOAT, 32)] {
            all.push(Box::new(DistributeScatter {
                src: it,
                labels: 6,
                dst: it,
                blocks: 3,
                splitters: 4,
                starts: 5,
                view,
            }));
        }
    }
    for word in WORDS {
        let view = View::IDENTITY;
        all.push(Box::new(MapKeys { word, keys: 1, n: 2, view, decode: false }));
        let fields = Fields::new(8).with(0, 4, 0);
        all.push(Box::new(EncodeKeys { word, raw: 1, words: 2, n: 3, fields, mode: 0 }));
        all.push(Box::new(Iota { word, out: 1, n: 2 }));
        all.push(Box::new(Gather { word, src: 1, idx: 2, dst: 3, n: 4 }));
        all.push(Box::new(SearchBounds { word, keys: 1, n: 2, queries: 3, upper: 4, q: 5, out: 6 }));
        all.push(Box::new(OrderScan { word, keys: 1, n: 2, out: 3, view }));
        for view in [View::IDENTITY, View::of_mode(mode::FLOAT, 32)] {
            all.push(Box::new(DistributeSample {
                word,
                keys: 1,
                segments: 2,
                splitters: 3,
                oversample: 16,
                scan: 4,
                first: Some(FirstTables { blocks: 5, n: 6, chunk: 7 }),
                view,
            }));
            all.push(Box::new(DistributeCount { word, keys: 1, blocks: 2, splitters: 3, counts: 4, labels: 5, view }));
        }
        all.push(Box::new(Reverse { word, p: 1, n: 2 }));
        let (offsets, row, across) = (2, 0, 3);
        all.push(Box::new(SegmentBoundaries { word, keys: 1, n: 2, offsets, count: 1, row, mode: 0, across }));
    }
    all.push(Box::new(IotaRows { out: 1, n: 2, row: 3 }));
    all.push(Box::new(GatherRecords { src: 1, idx: 2, dst: 3, n: 4, units: 5, unit: 4 }));
    all.push(Box::new(SegmentClassesCount { offsets: 1, segments: 2, odd_sorted: true, counters: 3 }));
    all.push(Box::new(SegmentClassesList {
        offsets: 1,
        segments: 2,
        odd_sorted: true,
        n: 3,
        counters: 4,
        lists: 5,
        ids: 7,
        room: 6,
    }));
    let tables = PaperTables { bounds: 1, starts: 2, offsets: 3 };
    all.push(Box::new(PaperGroupStarts { sequences: 2, groups: 2, tables }));
    all.push(Box::new(DistributeScan { counts: 1, starts: 2, m: 3, state: 4 }));
    all.push(Box::new(DistributeOffsets { segments: 1, starts: 2, offsets: 3, segs: 4, n: 5 }));
    all.push(Box::new(DistributeTables { offsets: 1, chunk: 2, segments: 3, blocks: 4, max_blocks: 5 }));
    for word in [ItemKind::U32, ItemKind::U64] {
        all.push(Box::new(DistributeSpans { word, splitters: 1, spans: 2 }));
    }
    all
}

#[test]
fn every_launch_matches_the_embedded_ptx() {
    for (file, ptx) in crate::gpu::Module::embedded_ptx() {
        let entries = entries(&ptx);
        let mut launched = std::collections::BTreeSet::new();
        for k in every_launch() {
            let name = k.id().name();
            let want = entries
                .get(&name)
                .unwrap_or_else(|| panic!("{file}: the host launches {name}, the PTX has no such kernel"));
            assert_eq!(&kinds(&k.params()), want, "{file}: {name}'s parameters");
            launched.insert(name);
        }
        // Every kernel in the PTX is launched by the host, except the probes the tests launch by name.
        let unused: Vec<_> = entries.keys().filter(|e| !launched.contains(*e) && !e.starts_with("probe_")).collect();
        assert!(unused.is_empty(), "{file}: kernels no host code launches: {unused:?}");
    }
}

/// A function's name -> the lines of its body.
type Bodies<'a> = BTreeMap<String, Vec<&'a str>>;

/// `.entry` name -> its body's lines, the bodies of the functions it calls
/// (`call.uni`: kernels the compiler did not inline whole) spliced in where
/// they are called.
fn bodies(ptx: &str) -> Bodies<'_> {
    let (mut entries, mut funcs) = (Bodies::new(), Bodies::new());
    let mut current: Option<(bool, String)> = None;
    for line in ptx.lines() {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            current = Some((true, rest.trim_end_matches('(').to_string()));
        } else if let Some(rest) = line.strip_prefix(".func ").or_else(|| line.strip_prefix(".visible .func ")) {
            // `.func (.param .b64 func_retval0) name(` or `.func name(`.
            let rest = rest.rsplit(") ").next().unwrap_or(rest);
            current = Some((false, rest.trim_end_matches('(').to_string()));
        } else if line.starts_with('}') {
            current = None;
        } else if let Some((entry, name)) = &current {
            let map = if *entry { &mut entries } else { &mut funcs };
            map.entry(name.clone()).or_default().push(line.trim());
        }
    }
    fn splice<'a>(body: &[&'a str], funcs: &Bodies<'a>, depth: u32, out: &mut Vec<&'a str>) {
        for &line in body {
            out.push(line);
            let callee =
                line.strip_prefix("call.uni ").and_then(|c| c.split([',', ' ', ';']).find(|t| funcs.contains_key(*t)));
            if let Some(f) = callee.filter(|_| depth < 8) {
                splice(&funcs[f], funcs, depth + 1, out);
            }
        }
    }
    entries
        .iter()
        .map(|(name, body)| {
            let mut out = Vec::new();
            splice(body, &funcs, 0, &mut out);
            (name.clone(), out)
        })
        .collect()
}

/// Whether a PTX line may touch global memory: a load, store or atomic
/// that is not of parameters, shared or local memory (a generic address
/// may be global).
fn touches_global(line: &str) -> bool {
    let op = line.split([' ', '\t']).next().unwrap_or("");
    let memory = ["ld.", "st.", "atom.", "red.", "cp.async.", "prefetch."].iter().any(|m| op.starts_with(m));
    memory && ![".param", ".shared", ".local"].iter().any(|space| op.contains(space))
}

/// A kernel the host may launch overlapping the one before it
/// (`Kernel::chains`) waits for it (`griddepcontrol.wait`) before any load
/// or store that may reach global memory, and every kernel whose PTX waits
/// so says it chains (so that none is launched plainly by mistake).
#[test]
fn overlapped_launches_wait_first() {
    for (line, global) in [
        ("ld.global.nc.u32 \t%r1, [%rd2];", true),
        ("ld.u32 \t%r1, [%rd2];", true),
        ("atom.global.add.u32 \t%r1, [%rd2], 1;", true),
        ("st.shared.b32 \t[%rd3], %r4;", false),
        ("ld.param.b64 \t%rd16, [k_param_2];", false),
        ("mov.u32 \t%r25, %ctaid.x;", false),
    ] {
        assert_eq!(touches_global(line), global, "{line}");
    }
    let (file, ptx) = crate::gpu::Module::embedded_ptx().into_iter().find(|(f, _)| f.contains("sm_90")).unwrap();
    let bodies = bodies(&ptx);
    let (mut chaining, mut wrong) = (0, Vec::new());
    for k in every_launch() {
        let name = k.id().name();
        let body = &bodies[&name];
        let wait = body.iter().position(|l| l.starts_with("griddepcontrol.wait"));
        if wait.is_some() != k.chains() {
            wrong.push(format!("{name}: chains() {}, waits in its PTX {}", k.chains(), wait.is_some()));
        }
        if let Some(wait) = wait {
            chaining += 1;
            if let Some(early) = body[..wait].iter().find(|l| touches_global(l)) {
                wrong.push(format!("{name} touches memory before it waits: {early}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{file}: {wrong:#?}");
    assert!(chaining > 20, "{chaining} kernels chain: the merge sort's, the sample sort's, the segmented ones");
}

#[test]
fn names_and_item_kinds() {
    assert_eq!(KernelId::with_width(Family::BlockMerge, 16, ItemKind::U32U64).name(), "block_merge16_u32_u64");
    assert_eq!(KernelId::new(Family::Iota, ItemKind::U64).name(), "iota_u64");
    assert_eq!(KernelId::plain(Family::PaperGroupStarts).name(), "paper_group_starts");
    for kind in ItemKind::ALL {
        let ranked = matches!(kind, ItemKind::U32Rank | ItemKind::U64Rank);
        if !ranked {
            assert_eq!(ItemKind::new(kind.key_bytes(), kind.val_bytes()), kind);
        }
        assert_eq!(kind.ranked().key_bytes(), kind.key_bytes());
        assert_eq!(kind.item_bytes() % kind.key_bytes().max(kind.val_bytes()), 0);
    }
    assert_eq!((ItemKind::U32U64.item_bytes(), ItemKind::U64U32.item_bytes(), ItemKind::U32.item_bytes()), (16, 16, 4));
    let it = Items::new(0x1000, 0x2000, 100, ItemKind::U64U32).range(10, 5);
    assert_eq!((it.keys, it.vals, it.n), (0x1000 + 80, 0x2000 + 40, 5));
    assert_eq!(Items::new(0x1000, 0x2000, 3, ItemKind::U32).vals, 0, "key-only items carry no payload address");
}

/// A segmented launch builds the kernel its plan names (stable, told the
/// spans, width: one decision, `SegmentLaunch::id`), so the plan's list of
/// kernels is what runs.
#[test]
fn segment_launches_build_the_planned_kernel() {
    use crate::options::SegmentKernel;
    use crate::plan::segments::SegmentLaunch;
    let segments = Segments::Rows { n: 10, len: 5 };
    for kind in [ItemKind::U32, ItemKind::U32U32, ItemKind::U64, ItemKind::U32Rank, ItemKind::U64U32] {
        for kernel in [
            SegmentKernel::WarpChunks { chunk: 64 },
            SegmentKernel::Warp { keys_per_lane: 16 },
            SegmentKernel::Block { tile: 2048 },
            SegmentKernel::Block { tile: 6144 },
            SegmentKernel::Block { tile: 8192 },
        ] {
            for (stable, known_spans) in [(false, false), (true, false), (false, true), (true, true)] {
                let k = SegmentLaunch::told(kernel, 10, kind, stable, known_spans, &crate::policy::HOPPER);
                let it = &Items::new(1, 2, 10, k.items(kind));
                let (stable, known) = (k.stable, known_spans.then_some(KnownSpans { spans: 3, ids: 4 }));
                let built = match kernel {
                    SegmentKernel::WarpChunks { chunk } => {
                        SegmentedChunks { items: it, segments, chunk, stable, known }.id()
                    }
                    SegmentKernel::Warp { keys_per_lane } => {
                        SegmentedWarp { width: WARP_SIZE * keys_per_lane, items: it, segments, stable, known }.id()
                    }
                    SegmentKernel::Block { .. } => {
                        SegmentedBlock { items: it, segments, stable, known, dual: k.dual }.id()
                    }
                };
                assert_eq!(built, k.id(kind), "{kind:?} {kernel:?} stable {stable} known {known_spans}");
            }
        }
    }
    let hopper = &crate::policy::HOPPER;
    let told = |kind, stable| SegmentLaunch::told(SegmentKernel::Block { tile: 2048 }, 1, kind, stable, true, hopper);
    assert_eq!(told(ItemKind::U64, false).id(ItemKind::U64).name(), "segmented_block_known_u64");
    assert_eq!(told(ItemKind::U32Rank, true).id(ItemKind::U32Rank).name(), "segmented_block_stable_known_u32_u32");
    // `u32` keys alone in the largest tiles take the dual block kernel; smaller
    // tiles and other items the block kernel; it has no stable build.
    let block = |tile, kind| SegmentLaunch::new(SegmentKernel::Block { tile }, 1, kind, hopper);
    assert_eq!(block(8192, ItemKind::U32).id(ItemKind::U32).name(), "segmented_block_dual_u32");
    assert_eq!(block(6144, ItemKind::U32).id(ItemKind::U32).name(), "segmented_block_dual_u32");
    assert_eq!(block(4096, ItemKind::U32).id(ItemKind::U32).name(), "segmented_block_u32");
    assert_eq!(block(8192, ItemKind::U32U32).id(ItemKind::U32U32).name(), "segmented_block_u32_u32");
    let stable = SegmentLaunch::told(SegmentKernel::Block { tile: 8192 }, 1, ItemKind::U32, true, false, hopper);
    assert!(block(8192, ItemKind::U32).dual && !stable.dual && stable.stable);
}
