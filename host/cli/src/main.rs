//! `warpsort`: the command-line program. `warpsort sort` sorts a `.npy` or
//! raw file on the GPU; `warpsort bench` sorts random keys with every
//! algorithm beside NVIDIA CUB, verifies each result and prints keys/s and
//! GB/s with the GPU's name; `warpsort info` names the GPU. `--help` says more.

use std::process::ExitCode;
use std::time::SystemTime;

use clap::Parser;
use warpsort_cli::cli::{Cli, run};

fn main() -> ExitCode {
    let main_at = SystemTime::now();
    run(Cli::parse(), main_at)
}
