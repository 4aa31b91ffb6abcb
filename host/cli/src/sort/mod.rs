//! `warpsort sort`: sorts a `.npy` or raw file on the GPU, in place or into
//! another file, never leaving a half-written result (see [`output`]).

pub mod dtype;
pub mod input;
pub mod output;
pub mod progress;

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use warpsort::{Gpu, HostOptions, Order, SortKey, SortOptions};

use dtype::DType;
use input::{Format, Input, named_npy};
use progress::Progress;

/// `warpsort sort --help`'s long description.
pub const LONG_ABOUT: &str = "Sorts a file of numbers on the GPU.

INPUT is a .npy file (a 1-D array of u16, i16, u32, i32, f32, u64, i64 or f64, little-endian) \
or a raw file of little-endian elements (then --dtype gives their type). The result replaces \
INPUT, or goes to OUTPUT: as .npy when OUTPUT's name ends in .npy (or, in place, when INPUT is \
a .npy file), raw otherwise. It is written to a temporary file beside the destination and \
renamed over it only once everything succeeded: on any error (bad header, unsupported dtype, \
truncated file, out of memory, no GPU) the destination is untouched and the exit status is 1.

Floats sort in IEEE 754 total order (as Rust's f32::total_cmp): -NaN (NaNs with the sign bit \
set) < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN. NumPy instead puts every NaN last. \
--descending reverses the whole order (+NaN first, -NaN last).";

/// `warpsort sort`'s options.
#[derive(Args, Clone, Debug)]
pub struct SortArgs {
    /// The file to sort: .npy, or raw little-endian elements (with --dtype).
    pub input: PathBuf,
    /// Write the result here instead of replacing INPUT (.npy when the name ends in .npy, else raw).
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: Option<PathBuf>,
    /// The element type of a raw INPUT (for a .npy INPUT it must match the header).
    #[arg(long, value_enum, value_name = "T")]
    pub dtype: Option<DType>,
    /// Largest first.
    #[arg(long)]
    pub descending: bool,
    /// Equal keys keep their input order (matters for --argsort).
    #[arg(long)]
    pub stable: bool,
    /// Write the sorting permutation (u32 positions; u64 past 2^32 - 1 elements) instead of the sorted values.
    #[arg(long)]
    pub argsort: bool,
    /// Device memory the sort may use, bytes (default: what is free). More
    /// data sorts beyond the GPU: runs sorted on it, merged from host memory.
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: Option<usize>,
}

impl SortArgs {
    /// The options of the sort.
    pub fn options(&self) -> SortOptions {
        let order = if self.descending { Order::Descending } else { Order::Ascending };
        SortOptions { stable: self.stable, ..SortOptions::ordered(order) }
    }

    /// Where the result goes.
    pub fn destination(&self) -> &Path {
        self.output.as_deref().unwrap_or(&self.input)
    }

    /// Whether the result is written as `.npy`.
    fn writes_npy(&self, format: Format) -> bool {
        named_npy(self.destination()) || (self.output.is_none() && format == Format::Npy)
    }
}

/// What sorts: the GPU, or in tests a CPU stand-in.
pub trait Sorter {
    /// Sorts `keys` as `opts` says, telling `opts.progress` how far it is.
    fn sort_keys<K: SortKey>(&self, keys: &mut [K], opts: &HostOptions) -> warpsort::Result<()>;
    /// The positions that sort `keys` (at most `u32::MAX` keys).
    fn argsort_u32<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u32>>;
    /// The positions that sort `keys`, any length.
    fn argsort_u64<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u64>>;
}

impl Sorter for Gpu {
    fn sort_keys<K: SortKey>(&self, keys: &mut [K], opts: &HostOptions) -> warpsort::Result<()> {
        self.sort_host(keys, opts)
    }

    fn argsort_u32<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u32>> {
        self.argsort_slice(keys, opts)
    }

    fn argsort_u64<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u64>> {
        let s = self.stream();
        let d = s.clone_htod(keys)?;
        let p = self.argsort64(&d, opts)?;
        Ok(s.clone_dtoh(&p)?)
    }
}

/// Whether an argsort of `n` keys needs `u64` positions.
pub fn wide_positions(n: usize) -> bool {
    n > u32::MAX as usize
}

/// What a successful sort did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Elements sorted.
    pub len: usize,
    /// Their type.
    pub dtype: DType,
}

/// Runs `warpsort sort`: checks and reads the input while `open` opens the
/// sorter (on its own thread: the driver's first compile of the kernels
/// overlaps the read), sorts, writes the result atomically.
pub fn run<S, F>(args: &SortArgs, open: F) -> Result<Summary, String>
where
    S: Sorter + Send + 'static,
    F: FnOnce() -> Result<S, String> + Send + 'static,
{
    let input = input::open(&args.input, args.dtype)?;
    let sorter = std::thread::spawn(open);
    let progress = Progress::for_input((input.len * input.dtype.size()) as u64);
    let dtype = input.dtype;
    let result = crate::with_dtype!(dtype, K => sort_file::<K, S>(args, input, sorter, &progress));
    progress.finish();
    result.map(|len| Summary { len, dtype })
}

/// [`run`] for keys of type `K`: the number of keys.
fn sort_file<K: SortKey + bytemuck::Pod, S: Sorter>(
    args: &SortArgs,
    input: Input,
    sorter: std::thread::JoinHandle<Result<S, String>>,
    progress: &Progress,
) -> Result<usize, String> {
    let (format, dtype) = (input.format, input.dtype);
    let mut keys: Vec<K> = input.read(progress)?;
    if !sorter.is_finished() {
        progress.phase("opening the GPU", None);
    }
    let sorter = sorter.join().map_err(|_| "opening the GPU panicked".to_string())??;
    let opts = args.options();
    progress.phase("sorting", None);
    let npy = args.writes_npy(format);
    let dest = args.destination();
    let n = keys.len();
    let gpu_error = |e: warpsort::Error| format!("sorting failed: {e}");
    if args.argsort {
        if wide_positions(n) {
            let p = sorter.argsort_u64(&keys, &opts).map_err(gpu_error)?;
            drop(keys);
            output::write_atomic(dest, npy.then_some("<u8"), n, bytemuck::cast_slice(&p), progress)?;
        } else {
            let p = sorter.argsort_u32(&keys, &opts).map_err(gpu_error)?;
            drop(keys);
            output::write_atomic(dest, npy.then_some("<u4"), n, bytemuck::cast_slice(&p), progress)?;
        }
    } else {
        let show = |p: warpsort::Progress| progress.host_sort(p);
        let host =
            HostOptions { sort: opts, memory_limit: args.memory_limit, progress: Some(&show), ..Default::default() };
        sorter.sort_keys(&mut keys, &host).map_err(gpu_error)?;
        output::write_atomic(dest, npy.then_some(dtype.npy()), n, bytemuck::cast_slice(&keys), progress)?;
    }
    Ok(n)
}

/// Runs the command as the binary does: prints the outcome, the exit status.
pub fn main(args: &SortArgs) -> std::process::ExitCode {
    let t = Instant::now();
    match run(args, || crate::startup::open_gpu(None)) {
        Ok(s) => {
            let what = if args.argsort { "argsorted" } else { "sorted" };
            eprintln!(
                "warpsort: {what} {} {} elements into {} in {:.2} s",
                s.len,
                s.dtype.name(),
                args.destination().display(),
                t.elapsed().as_secs_f64()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("warpsort sort: {e}; nothing was written");
            std::process::ExitCode::FAILURE
        }
    }
}
