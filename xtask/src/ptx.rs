//! Rust kernels to PTX and machine code: rustc's nvptx backend emits one
//! fat-LTO bitcode module, `opt` keeps only the kernels' reachable code, `llc`
//! writes PTX, `ptxas` assembles that PTX into a cubin (and reports every
//! kernel's resources). The host embeds all four images zstd-compressed, in
//! [`IMAGES`]. The link steps are `warpsort_build::link`'s, which builds user
//! key types' kernels the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::ptxas::{self, Assembly};
use crate::run;

/// One PTX build and the machine code assembled from it.
pub struct Target {
    /// `-mcpu` of the PTX build (its `.target`).
    pub cpu: &'static str,
    /// The PTX's file name.
    pub ptx: &'static str,
    /// The GPU architecture its cubin is for.
    pub arch: &'static str,
    /// The cubin's file name.
    pub cubin: &'static str,
}

/// The builds the host embeds. sm_70 PTX loads on every GPU from Volta on
/// (JIT); its sm_80 cubin is what an A100 would JIT-compile from it, and runs
/// on every 8.x GPU. The sm_90 build lets LLVM schedule for Hopper and uses
/// its instructions (`griddepcontrol`); its cubin runs on 9.0 GPUs only, its
/// PTX on every later GPU (JIT). Each PTX is assembled (and its resources
/// checked) for the one architecture whose cubin is built from it: the host
/// never loads sm_70 PTX on a 9.0 GPU.
pub const TARGETS: [Target; 2] = [
    Target { cpu: "sm_70", ptx: "warpsort_sm70.ptx", arch: "sm_80", cubin: "warpsort_sm80.cubin" },
    Target { cpu: "sm_90", ptx: "warpsort_sm90.ptx", arch: "sm_90", cubin: "warpsort_sm90.cubin" },
];

/// The folder of the images the host embeds (`host/src/gpu/module.rs`), each
/// compressed as `NAME.zst`.
pub const IMAGES: &str = "host/images";

/// The folder the plain PTX and cubins are written to as well: ptxas's input
/// and output, for reading, and for `warpsort bench --ptx FILE`.
pub const PLAIN: &str = "target/ptx";

/// zstd's level for the embedded images: its best ratio short of `--ultra`
/// (11-12x on the PTX, 6x on a cubin); the host decompresses with `ruzstd`.
const ZSTD_LEVEL: i32 = 19;

/// Builds the bitcode for one GPU target and returns its path.
fn bitcode(root: &Path, cpu: &str) -> Result<PathBuf, String> {
    let target_dir = root.join("target/ptx").join(cpu);
    run(Command::new("cargo")
        .current_dir(root)
        .args(["rustc", "--quiet", "-p", "warpsort-kernels", "--profile", "ptx"])
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core", "--crate-type", "cdylib"])
        .arg("--target-dir")
        .arg(&target_dir)
        // One -Ctarget-cpu for every crate of the build, core included. The
        // raised unroll threshold unrolls the 16-item register loops whole
        // (block merge, 512-key warp sorts): a loop left rolled indexes its
        // register array at run time, which puts the array in local memory.
        .env(
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
            format!("-Ctarget-cpu={cpu} -Cllvm-args=-unroll-threshold=1000"),
        )
        // No linker runs: rustc stops at the LTO'd bitcode.
        .args(["--", "--emit=llvm-bc", "-Clinker=/bin/true"]))?;
    let bc = target_dir.join("nvptx64-nvidia-cuda/ptx/deps/warpsort_kernels.bc");
    if bc.exists() { Ok(bc) } else { Err(format!("{} was not produced", bc.display())) }
}

/// Builds one PTX file; returns its text and kernel names.
fn build_one(root: &Path, cpu: &str) -> Result<(String, Vec<String>), String> {
    let tools = warpsort_build::Tools::find().map_err(|e| e.to_string())?;
    let bc = bitcode(root, cpu)?;
    let bounds = warpsort_kernels::config::LAUNCH_BOUNDS;
    let (ptx, kernels) = warpsort_build::link(&tools, &bc, cpu, &bounds).map_err(|e| e.to_string())?;
    if kernels.is_empty() {
        return Err("the device crate defines no kernels".into());
    }
    Ok((ptx, kernels))
}

/// One target built: its PTX and, with `ptxas`, its cubin and report.
struct Built {
    target: &'static Target,
    ptx: String,
    kernels: usize,
    assembly: Option<Assembly>,
    /// How long its steps took, for the log.
    times: String,
}

fn build_target(root: &Path, target: &'static Target, assembler: Option<&Path>) -> Result<Built, String> {
    let t0 = Instant::now();
    let (ptx, kernels) = build_one(root, target.cpu)?;
    let plain = root.join(PLAIN);
    let ptx_path = plain.join(target.ptx);
    std::fs::write(&ptx_path, &ptx).map_err(|e| format!("{}: {e}", ptx_path.display()))?;
    let t1 = Instant::now();
    let assembly = match assembler {
        Some(p) => Some(ptxas::assemble(p, &ptx_path, target.arch, &plain.join(target.cubin))?),
        None => None,
    };
    let times = format!("rustc+llc {:.0} s, ptxas {:.0} s", (t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
    Ok(Built { target, ptx, kernels: kernels.len(), assembly, times })
}

/// A zstd frame of `raw`, with its size and a checksum in the header.
fn compress(raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(|e| e.to_string())?;
    c.include_checksum(true).map_err(|e| e.to_string())?;
    c.include_contentsize(true).map_err(|e| e.to_string())?;
    c.compress(raw).map_err(|e| e.to_string())
}

/// The committed image `name` decompressed (`None` when missing or corrupt).
fn committed(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let z = std::fs::read(dir.join(format!("{name}.zst"))).ok()?;
    zstd::stream::decode_all(&z[..]).ok()
}

/// `cargo xtask build-ptx`: builds both targets at once (each is one mostly
/// single-threaded pipeline: rustc with one codegen unit, `llc`, `ptxas`),
/// then compares every image with the committed one, decompressed (so the
/// compressor's output never matters, only the content), and writes the
/// changed ones; `check` writes nothing and fails when any differs. Without
/// `ptxas` the cubins are neither built nor checked, and a changed PTX is an
/// error: the cubins would no longer match it.
pub fn build(root: &Path, check: bool, require_ptxas: bool) -> Result<(), String> {
    let started = Instant::now();
    let images = root.join(IMAGES);
    std::fs::create_dir_all(&images).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join(PLAIN)).map_err(|e| e.to_string())?;
    let assembler = ptxas::find();
    match &assembler {
        Some(p) => println!("ptxas: {} ({})", p.display(), ptxas::version(p)),
        None if require_ptxas => {
            return Err("ptxas not found (pip install nvidia-cuda-nvcc-cu12, or set PTXAS)".into());
        }
        None => eprintln!(
            "warning: ptxas not found (pip install nvidia-cuda-nvcc-cu12, or set PTXAS): no cubins, no resource report"
        ),
    }
    let results: Vec<Result<Built, String>> = std::thread::scope(|s| {
        let jobs: Vec<_> = TARGETS.iter().map(|t| s.spawn(|| build_target(root, t, assembler.as_deref()))).collect();
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|_| Err("a build thread panicked".into()))).collect()
    });
    let built = results.into_iter().collect::<Result<Vec<_>, _>>()?;

    // (file name, fresh content) of every image built, and the problems ptxas found.
    let mut fresh: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut problems = Vec::new();
    for b in &built {
        println!("{}: {} kernels for {}, {} bytes ({})", b.target.ptx, b.kernels, b.target.cpu, b.ptx.len(), b.times);
        fresh.push((b.target.ptx, b.ptx.clone().into_bytes()));
        if let Some(a) = &b.assembly {
            print!("{}", a.report);
            println!("{}: for {}, {} bytes", b.target.cubin, b.target.arch, a.cubin.len());
            fresh.push((b.target.cubin, a.cubin.clone()));
            problems.extend(a.problem.clone());
        }
    }
    let changed: Vec<&(&str, Vec<u8>)> =
        fresh.iter().filter(|(name, raw)| committed(&images, name).as_deref() != Some(&raw[..])).collect();
    if check {
        if assembler.is_none() {
            eprintln!("warning: the embedded cubins were not checked (no ptxas)");
        }
        if !changed.is_empty() {
            let names: Vec<String> = changed.iter().map(|(n, _)| format!("{IMAGES}/{n}.zst")).collect();
            return Err(format!(
                "embedded kernels are stale (run `cargo xtask build-ptx` and commit): {}",
                names.join(", ")
            ));
        }
    } else if assembler.is_none() && !changed.is_empty() {
        return Err(format!(
            "the PTX changed ({}), and the cubins must be rebuilt with it, but ptxas is missing \
             (pip install nvidia-cuda-nvcc-cu12, or set PTXAS): nothing written",
            changed.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        ));
    } else {
        // Compressing is the slow part (level 19: ~13 s for a PTX): in parallel.
        let written: Vec<Result<String, String>> = std::thread::scope(|s| {
            let jobs: Vec<_> = changed
                .iter()
                .map(|(name, raw)| {
                    let path = images.join(format!("{name}.zst"));
                    s.spawn(move || {
                        let z = compress(raw)?;
                        std::fs::write(&path, &z).map_err(|e| format!("{}: {e}", path.display()))?;
                        Ok(format!("wrote {}: {} -> {} bytes", path.display(), raw.len(), z.len()))
                    })
                })
                .collect();
            jobs.into_iter().map(|j| j.join().unwrap_or_else(|_| Err("a compression thread panicked".into()))).collect()
        });
        for w in written {
            println!("{}", w?);
        }
    }
    for (name, raw) in &fresh {
        let z = std::fs::metadata(images.join(format!("{name}.zst"))).map(|m| m.len()).unwrap_or(0);
        println!("{IMAGES}/{name}.zst: {z} bytes ({} raw)", raw.len());
    }
    println!("build-ptx: {:.0} s (plain PTX and cubins in {PLAIN}/)", started.elapsed().as_secs_f64());
    match problems.first() {
        Some(p) => Err(p.clone()),
        None => Ok(()),
    }
}
