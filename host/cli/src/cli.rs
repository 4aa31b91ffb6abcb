//! The command line: `warpsort bench`, `warpsort info`, `warpsort sort`, and
//! the hidden `warpsort startup-probe`.

use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Parser, Subcommand};

use crate::bench::BenchArgs;
use crate::sort::SortArgs;
use crate::startup::{ProbeArgs, open_gpu};

/// GPU sorting in Rust: sort files, benchmark beside NVIDIA CUB, name the GPU.
#[derive(Parser, Debug)]
#[command(name = "warpsort", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Benchmark every algorithm beside NVIDIA CUB, verify each result, write results.jsonl.
    Bench(BenchArgs),
    /// Name the GPU: compute capability, SMs, the kernels loaded (cubin or PTX).
    Info,
    /// Sort a .npy or raw file on the GPU (floats in IEEE total order: see --help).
    #[command(long_about = crate::sort::LONG_ABOUT)]
    Sort(SortArgs),
    /// Times a new process's first calls (run by `bench --suite startup`).
    #[command(hide = true)]
    StartupProbe(ProbeArgs),
}

/// Prints an error and returns failure.
fn failed(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("warpsort: {e}");
    ExitCode::FAILURE
}

/// Runs the command line; `main_at` is when `main` began (for the start-up probe).
pub fn run(cli: Cli, main_at: SystemTime) -> ExitCode {
    match cli.command {
        Command::Info => match open_gpu(None) {
            Ok(g) => {
                let i = g.info();
                let (major, minor) = i.compute_capability;
                println!("{} (compute capability {major}.{minor}, {} SMs, kernels: {})", i.name, i.sms, i.ptx);
                ExitCode::SUCCESS
            }
            Err(e) => failed(e),
        },
        Command::Bench(opts) => {
            let gpu = match open_gpu(opts.ptx.as_deref()) {
                Ok(g) => g,
                Err(e) => return failed(e),
            };
            match crate::bench::run(&gpu, &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => failed(format!("benchmark failed: {e}")),
            }
        }
        Command::Sort(args) => crate::sort::main(&args),
        Command::StartupProbe(args) => match crate::startup::probe(&args, main_at) {
            Ok(p) => {
                println!("{}", serde_json::to_string(&p).expect("numbers and strings serialize"));
                ExitCode::SUCCESS
            }
            Err(e) => failed(format!("startup-probe: {e}")),
        },
    }
}
