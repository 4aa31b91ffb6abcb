//! `cargo xtask`: the build steps cargo alone cannot do.
//!
//! - `build-ptx [--check] [--require-ptxas]`: compiles `kernels-gpu` for
//!   `nvptx64-nvidia-cuda` (one build per target GPU, both at once), links the
//!   fat-LTO bitcode to PTX with llvm-tools' `opt` and `llc` (rustup's
//!   `llvm-bitcode-linker` is not available), assembles each PTX with `ptxas`
//!   into a cubin (sm_70 PTX for sm_80, sm_90 PTX for sm_90) and reports every
//!   kernel's resources from the same run, and writes the four images
//!   zstd-compressed to `host/images/` (plain copies in `target/ptx/`).
//!   `--check` fails when an embedded image, decompressed, differs from a
//!   fresh build; `--require-ptxas` fails when `ptxas` is missing.
//! - `bundle`: release test and benchmark binaries plus a runner script in
//!   `bundle/`, for a GPU machine without Rust.
//! - `plot RESULTS.jsonl OUT_DIR`: the benchmark's rows as CSV and SVG charts.
//! - `choice RESULTS.jsonl`: the `choice` suite's rows as the table of merge
//!   sort over sample sort time and the `SampleRange` entries of
//!   `host/src/policy.rs` they imply.

mod bundle;
mod choice;
mod plot;
mod ptx;
mod ptxas;
mod readme;

use std::path::PathBuf;
use std::process::ExitCode;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let result = match args.first().map(String::as_str) {
        Some("build-ptx") => ptx::build(&root(), flag("--check"), flag("--require-ptxas")),
        Some("bundle") => bundle::bundle(&root()),
        Some("plot") if args.len() == 3 => plot::plot(std::path::Path::new(&args[1]), std::path::Path::new(&args[2])),
        Some("choice") if args.len() == 2 => choice::choice(std::path::Path::new(&args[1])),
        Some("readme") if args.len() >= 2 => readme::readme(&root(), &args[1..]),
        _ => {
            Err("usage: cargo xtask build-ptx [--check] [--require-ptxas] | bundle | plot RESULTS.jsonl OUT_DIR | choice RESULTS.jsonl | readme RESULTS.jsonl...".into())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a command, failing with its name and status.
pub fn run(cmd: &mut std::process::Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() { Ok(()) } else { Err(format!("{:?} failed: {status}", cmd.get_program())) }
}

/// Runs a command and returns its standard output.
pub fn output(cmd: &mut std::process::Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{:?} failed: {}\n{}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}
