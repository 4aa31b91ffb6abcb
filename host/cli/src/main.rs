//! `warpsort`: the command-line program. `warpsort bench` sorts random keys
//! with every algorithm beside NVIDIA CUB, verifies each result on the GPU and
//! prints keys/s and GB/s with the GPU's name. `warpsort info` names the GPU.

mod bench;

use std::process::ExitCode;

const USAGE: &str = "usage: warpsort bench [--quick] [--reps N] [--cub PATH] [--out DIR] [--suite LIST] [--ptx FILE]
       warpsort info
  --quick      smaller sizes (2^20..2^24) and fewer repetitions
  --reps N     timed repetitions per measurement (median reported; default 10)
  --cub PATH   the CUB harness binary (built from xtask/cub/cub_bench.cu) to run beside warpsort
  --out DIR    write results.jsonl there (default: current directory)
  --suite LIST comma-separated: copy,warp,segments,sizes,naive,dists,types,tune,steps,paper (default: all)
  --ptx FILE   load the kernels from this PTX file instead of the embedded PTX (to compare kernel builds)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gpu = || match warpsort::Gpu::new() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("warpsort: no GPU: {e}");
            None
        }
    };
    match args.first().map(String::as_str) {
        Some("info") => match gpu() {
            Some(g) => {
                let i = g.info();
                println!(
                    "{} (compute capability {}.{}, {} SMs, {} PTX)",
                    i.name, i.compute_capability.0, i.compute_capability.1, i.sms, i.ptx
                );
                ExitCode::SUCCESS
            }
            None => ExitCode::FAILURE,
        },
        Some("bench") => {
            let opts = match bench::Options::parse(&args[1..]) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("warpsort: {e}\n{USAGE}");
                    return ExitCode::from(2);
                }
            };
            let g = match &opts.ptx {
                None => gpu(),
                Some(path) => match std::fs::read_to_string(path) {
                    Ok(src) => warpsort::Gpu::with_ptx(0, &src).map_err(|e| eprintln!("warpsort: {e}")).ok(),
                    Err(e) => {
                        eprintln!("warpsort: {}: {e}", path.display());
                        None
                    }
                },
            };
            let Some(g) = g else { return ExitCode::FAILURE };
            match bench::run(&g, &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("warpsort: benchmark failed: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
