//! Rust kernels to PTX: rustc's nvptx backend emits one fat-LTO bitcode module,
//! `opt` keeps only the kernels' reachable code, `llc` writes PTX.

use std::path::{Path, PathBuf};
use std::process::Command;

use warpsort_kernels::config::LAUNCH_BOUNDS;

use crate::{output, ptxas, run};

/// The PTX builds the host embeds: `(file stem, -mcpu)`. sm_70 PTX loads on
/// every GPU from Volta on (the driver JIT-compiles it for newer ones); the
/// sm_90 build lets LLVM schedule for Hopper.
pub const TARGETS: [(&str, &str); 2] = [("warpsort_sm70", "sm_70"), ("warpsort_sm90", "sm_90")];

/// The GPU architectures every kernel is assembled for by `ptxas` as a check.
const PTXAS_ARCHS: [&str; 2] = ["sm_80", "sm_90"];

fn llvm_tool(name: &str) -> Result<PathBuf, String> {
    let sysroot = output(Command::new("rustc").args(["--print", "sysroot"]))?;
    let host = output(Command::new("rustc").args(["--print", "host-tuple"]))?;
    let p = Path::new(sysroot.trim()).join("lib/rustlib").join(host.trim()).join("bin").join(name);
    if p.exists() {
        Ok(p)
    } else {
        Err(format!("{} not found: install the llvm-tools component (rustup toolchain install)", p.display()))
    }
}

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

/// Drops llc's comments and writes the device crate's launch bounds (`config::LAUNCH_BOUNDS`) into
/// the PTX after the parameter list of each matching kernel, as `.maxnreg`:
/// the registers a thread may use when that many threads share the 64K
/// registers of an SM. (`.maxntid` says the same more directly, but ptxas then
/// aimed at two such blocks per SM and spilled kernels that fit one.)
const REGISTERS_PER_SM: u32 = 65536;

fn with_launch_bounds(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() + 4096);
    let mut bound = None;
    for line in ptx.lines() {
        // llc's comments (block labels, `// @name`) are a sixth of the text
        // the host embeds and the driver parses: dropped.
        let line = match line.find("//") {
            Some(0) => continue,
            Some(i) => line[..i].trim_end(),
            None => line,
        };
        out.push_str(line);
        out.push('\n');
        if let Some(name) = line.strip_prefix(".visible .entry ") {
            bound = LAUNCH_BOUNDS.iter().find(|(prefix, _)| name.starts_with(prefix)).map(|&(_, n)| n);
        } else if let (Some(n), true) = (bound, line.starts_with(')')) {
            out.push_str(&format!(".maxnreg {}\n", REGISTERS_PER_SM / n));
            bound = None;
        }
    }
    out
}

/// The kernels (functions with the `ptx_kernel` calling convention).
fn kernel_names(ll: &str) -> Vec<String> {
    ll.lines()
        .filter_map(|l| l.strip_prefix("define ptx_kernel void @"))
        .filter_map(|l| l.split('(').next())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

/// Builds one PTX file; returns its text and kernel names.
fn build_one(root: &Path, cpu: &str) -> Result<(String, Vec<String>), String> {
    let bc = bitcode(root, cpu)?;
    let dir = bc.parent().unwrap().to_path_buf();
    let ll = output(Command::new(llvm_tool("llvm-dis")?).arg(&bc).arg("-o").arg("-"))?;
    let kernels = kernel_names(&ll);
    if kernels.is_empty() {
        return Err("the device crate defines no kernels".into());
    }
    let internal = dir.join("internalized.bc");
    run(Command::new(llvm_tool("opt")?)
        .arg(&bc)
        .arg("-passes=internalize,globaldce")
        .arg(format!("-internalize-public-api-list={}", kernels.join(",")))
        .arg("-o")
        .arg(&internal))?;
    let ptx = dir.join("out.ptx");
    run(Command::new(llvm_tool("llc")?)
        .args(["-march=nvptx64", &format!("-mcpu={cpu}"), "-O3"])
        .arg(&internal)
        .arg("-o")
        .arg(&ptx))?;
    let text = std::fs::read_to_string(&ptx).map_err(|e| e.to_string())?;
    Ok((with_launch_bounds(&text), kernels))
}

/// `cargo xtask build-ptx`.
pub fn build(root: &Path, check: bool, require_ptxas: bool) -> Result<(), String> {
    let out_dir = root.join("host/ptx");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let mut stale = Vec::new();
    let assembler = ptxas::find();
    if assembler.is_none() {
        let msg = "ptxas not found (pip install nvidia-cuda-nvcc-cu12, or set PTXAS)";
        if require_ptxas {
            return Err(msg.into());
        }
        eprintln!("warning: {msg}; skipping the resource report");
    }
    for (stem, cpu) in TARGETS {
        let (text, kernels) = build_one(root, cpu)?;
        let path = out_dir.join(format!("{stem}.ptx"));
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != text {
            if check {
                stale.push(path.display().to_string());
            } else {
                std::fs::write(&path, &text).map_err(|e| e.to_string())?;
            }
        }
        println!("{stem}.ptx: {} kernels for {cpu}, {} bytes", kernels.len(), text.len());
        if let Some(p) = &assembler {
            for arch in PTXAS_ARCHS.iter().filter(|a| cpu <= **a) {
                ptxas::report(p, &text, arch, &root.join("target/ptx").join(cpu))?;
            }
        }
    }
    if !stale.is_empty() {
        return Err(format!("embedded PTX is stale (run `cargo xtask build-ptx` and commit): {}", stale.join(", ")));
    }
    Ok(())
}
