//! `warpsort bench`'s options.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// A benchmark suite (`--suite`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// Device-to-device copy of 2^26 keys: the bandwidth ceiling.
    Copy,
    /// Warp and block sorts of 2^26 keys in short segments.
    Warp,
    /// Segmented sorts of 2^24 keys (rows and offsets) beside CUB.
    Segments,
    /// Full sorts of u32 keys and pairs against n, beside CUB.
    Sizes,
    /// Fused against naive (one launch per stage) bitonic sort.
    Naive,
    /// Every input distribution at 2^24, beside CUB.
    Dists,
    /// Keys already in order, reversed, a few runs, one swap (2^24..2^28),
    /// with and without the scan of their order, beside CUB.
    Presorted,
    /// Key types, 64-bit payloads, argsort and the stable sort, beside CUB.
    Types,
    /// u32 keys with u64 values against n (2^12..2^28), unstable and
    /// stable, beside CUB.
    Values,
    /// The merge sort against the sample sort for every kind of items a
    /// full sort sees, against n (2^20..2^28): the evidence of the
    /// algorithm table the default sort reads.
    Choice,
    /// Composite keys (tuples, byte strings) and a three-column ORDER BY,
    /// beside CUB's comparator merge sort and its radix sort with a
    /// decomposer.
    Custom,
    /// GPU-Warpsort's tile and merge parameters.
    Tune,
    /// The sample sort's chunks and samples a way against n (2^22..2^28).
    TuneSample,
    /// Time per kernel of GPU-Warpsort and bitonic sort.
    Steps,
    /// The paper's experiments (Figs. 11-14) and parameters.
    Paper,
    /// Process start-up as a new user sees it: the first call of each operation.
    Startup,
    /// The distributed sort over 1, 2, 4, 8 GPUs beside one GPU's sort and
    /// NCCL's all-to-all (only when asked for).
    Multigpu,
    /// Host slices sorted end to end beside the pinned copy bound and rayon
    /// (only when asked for).
    Host,
    /// Host keys beyond the GPU's memory (12 Gi u32 keys by default) beside
    /// rayon and the copy bound of two passes (only when asked for).
    Outofcore,
}

/// `warpsort bench`: warpsort's algorithms beside NVIDIA CUB, every result
/// verified, rows printed and written to `results.jsonl`.
#[derive(Args, Clone, Debug)]
pub struct BenchArgs {
    /// Smaller sizes (2^20..2^24) and fewer cases.
    #[arg(long)]
    pub quick: bool,
    /// Timed repetitions per measurement (the median is reported; 0 counts as 1).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub reps: usize,
    /// The CUB harness binary (built from xtask/cub/cub_bench.cu) to run beside warpsort.
    #[arg(long, value_name = "PATH")]
    pub cub: Option<PathBuf>,
    /// PyTorch's harness (xtask/torch/torch_bench.py, `torch.sort`) to run
    /// beside CUB's in the `sizes` and `types` suites from 2^24 keys on
    /// (with `--cub`).
    #[arg(long, value_name = "PATH")]
    pub torch: Option<PathBuf>,
    /// Write results.jsonl into this folder (created when missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Comma-separated suites to run (default: all).
    #[arg(long = "suite", value_name = "LIST", value_delimiter = ',')]
    pub suites: Vec<Suite>,
    /// Load the kernels from this PTX file instead of the embedded PTX (to compare kernel builds).
    #[arg(long, value_name = "FILE")]
    pub ptx: Option<PathBuf>,
    /// Keys the outofcore suite sorts (default 12 Gi; 1 Gi with --quick).
    #[arg(long, value_name = "N")]
    pub outofcore_keys: Option<usize>,
    /// Device memory the outofcore suite's sort may use, bytes (default: the
    /// free memory; 2 GiB with --quick).
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: Option<usize>,
    /// Leave out the rows of the sample sort run alone (rows `sample`).
    #[arg(long)]
    pub no_sample: bool,
}

impl Suite {
    /// Suites that run only when asked for (several GPUs, tens of GiB of
    /// host memory).
    pub const ASKED_FOR: [Suite; 3] = [Suite::Multigpu, Suite::Host, Suite::Outofcore];
}

impl BenchArgs {
    /// Whether `suite` is to run.
    pub fn wants(&self, suite: Suite) -> bool {
        (self.suites.is_empty() && !Suite::ASKED_FOR.contains(&suite)) || self.suites.contains(&suite)
    }

    /// Timed repetitions, at least one.
    pub fn reps(&self) -> usize {
        self.reps.max(1)
    }
}
