//! `cargo xtask bundle`: everything a GPU machine without Rust needs to run the
//! GPU test suite and the benchmark, in `bundle/` and compressed in
//! `.gpu/bundle.tar.xz`.

use std::path::Path;
use std::process::Command;

use crate::output;

/// The example programs the GPU machine runs (`examples/`).
const EXAMPLES: [&str; 4] = ["distributed_cluster", "distributed_ranks", "order_by", "custom_key"];

/// Builds release binaries and writes `bundle/run.sh`. Rebuilds the PTX and
/// the cubins first, so that the binaries never embed kernels older than the
/// source (which needs `ptxas` when the kernels changed).
pub fn bundle(root: &Path) -> Result<(), String> {
    crate::ptx::build(root, false, false)?;
    let dir = root.join("bundle");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).map_err(|e| e.to_string())?;
    // Test binaries: cargo prints their paths as JSON artifacts.
    let json = output(Command::new("cargo").current_dir(root).args([
        "test",
        "--release",
        "--no-run",
        "--workspace",
        "--exclude",
        "xtask",
        "--message-format=json",
    ]))?;
    let mut count = 0;
    for line in json.lines().filter(|l| l.contains("\"executable\":\"")) {
        let exe = line.split("\"executable\":\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("");
        // A test harness: the profile's flag (the target's says only that
        // `cargo test` builds it, as it builds every binary).
        let profile = line.split("\"profile\":{").nth(1).and_then(|p| p.split('}').next()).unwrap_or("");
        let is_test = profile.contains("\"test\":true");
        // Left to CI: the device crate's tests, which run its kernels on
        // the CPU emulator (no GPU, minutes of a GPU machine's time), and a
        // proc-macro's, which link the toolchain's `libstd` dynamically.
        let on_cpu = line.contains("#warpsort-kernels@") || line.contains("\"kind\":[\"proc-macro\"]");
        if exe.is_empty() || !is_test || on_cpu {
            continue;
        }
        let name = Path::new(exe).file_name().unwrap().to_string_lossy().to_string();
        std::fs::copy(exe, dir.join("tests").join(&name)).map_err(|e| e.to_string())?;
        count += 1;
    }
    crate::run(Command::new("cargo").current_dir(root).args([
        "build",
        "--release",
        "-p",
        "warpsort-cli",
        "--bin",
        "warpsort",
    ]))?;
    std::fs::copy(root.join("target/release/warpsort"), dir.join("warpsort")).map_err(|e| e.to_string())?;
    crate::run(Command::new("cargo").current_dir(root).args([
        "build",
        "--release",
        "-p",
        "warpsort-examples",
        "--bins",
    ]))?;
    std::fs::create_dir_all(dir.join("examples")).map_err(|e| e.to_string())?;
    for example in EXAMPLES {
        std::fs::copy(root.join("target/release").join(example), dir.join("examples").join(example))
            .map_err(|e| e.to_string())?;
    }
    let cub = root.join("xtask/cub/cub_bench.cu");
    std::fs::copy(&cub, dir.join("cub_bench.cu")).map_err(|e| e.to_string())?;
    if let Some(exe) = cub_harness(root, &cub)? {
        std::fs::copy(exe, dir.join("cub_bench")).map_err(|e| e.to_string())?;
        println!("bundle/cub_bench: the CUB harness, built here (run.sh then needs no nvcc)");
    }
    std::fs::copy(root.join("xtask/torch/torch_bench.py"), dir.join("torch_bench.py")).map_err(|e| e.to_string())?;
    std::fs::copy(root.join("xtask/run-bundle.sh"), dir.join("run.sh")).map_err(|e| e.to_string())?;
    println!("bundle/: {count} test binaries, warpsort, the examples, cub_bench.cu, torch_bench.py, run.sh");
    // The same, compressed: what fits a size-limited copy to the GPU
    // machine. `tar xJf .gpu/bundle.tar.xz` there. Every binary embeds the
    // same kernel images (about 4 MB, compressed already): xz's -9 keeps
    // 64 MiB of history (and one block for it all), so each copy after the
    // first costs almost nothing (31 MB at -6's 8 MiB, 8 MB at -9).
    std::fs::create_dir_all(root.join(".gpu")).map_err(|e| e.to_string())?;
    crate::run(Command::new("tar").current_dir(root).args(["-I", "xz -T0 -9", "-cf", ".gpu/bundle.tar.xz", "bundle"]))?;
    println!(
        ".gpu/bundle.tar.xz: {} MB",
        std::fs::metadata(root.join(".gpu/bundle.tar.xz")).map_err(|e| e.to_string())?.len() >> 20
    );
    Ok(())
}

/// The CUB harness built with an `nvcc` on this machine (`NVCC`, or `nvcc` on
/// the PATH; the `nvidia-cuda-nvcc`, `-crt`, `-cccl`, `-runtime` and
/// `nvidia-nvvm` wheels make one), in `target/cub/`, rebuilt when its source
/// is newer; `None` without an `nvcc` (run.sh then compiles it on the GPU
/// machine, about three minutes). `NVCC_LIBDIR` adds a library folder for
/// wheels that keep `libcudart_static.a` outside nvcc's own search path.
fn cub_harness(root: &Path, src: &Path) -> Result<Option<std::path::PathBuf>, String> {
    let nvcc = std::env::var("NVCC").unwrap_or_else(|_| "nvcc".into());
    if Command::new(&nvcc).arg("--version").output().map_or(true, |o| !o.status.success()) {
        return Ok(None);
    }
    let exe = root.join("target/cub/cub_bench");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&exe).is_some() && modified(&exe) >= modified(src) {
        return Ok(Some(exe));
    }
    std::fs::create_dir_all(exe.parent().unwrap()).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&nvcc);
    cmd.args(["-O3", "-std=c++17", "-arch=sm_90", "-o"]).arg(&exe).arg(src);
    if let Ok(lib) = std::env::var("NVCC_LIBDIR") {
        cmd.arg(format!("-L{lib}"));
    }
    println!("building the CUB harness with {nvcc} (a few minutes)");
    crate::run(&mut cmd)?;
    Ok(Some(exe))
}
