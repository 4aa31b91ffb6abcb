//! `cargo xtask bundle`: everything a GPU machine without Rust needs to run the
//! GPU test suite and the benchmark, in `bundle/` and compressed in
//! `.gpu/bundle.tar.xz`.

use std::path::Path;
use std::process::Command;

use crate::output;

/// Builds release binaries and writes `bundle/run.sh`. Rebuilds the PTX
/// first, so that the binaries never embed kernels older than the source.
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
        let is_test = line.contains("\"test\":true");
        if exe.is_empty() || !is_test {
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
        "warpsort",
        "--bin",
        "warpsort",
    ]))?;
    std::fs::copy(root.join("target/release/warpsort"), dir.join("warpsort")).map_err(|e| e.to_string())?;
    let cub = root.join("xtask/cub/cub_bench.cu");
    if cub.exists() {
        std::fs::copy(&cub, dir.join("cub_bench.cu")).map_err(|e| e.to_string())?;
    }
    std::fs::copy(root.join("xtask/run-bundle.sh"), dir.join("run.sh")).map_err(|e| e.to_string())?;
    println!("bundle/: {count} test binaries, warpsort, cub_bench.cu, run.sh");
    // The same, compressed (the binaries embed the PTX text): what fits a
    // size-limited copy to the GPU machine. `tar xJf .gpu/bundle.tar.xz` there.
    std::fs::create_dir_all(root.join(".gpu")).map_err(|e| e.to_string())?;
    crate::run(Command::new("tar").current_dir(root).args(["-I", "xz -T0 -6", "-cf", ".gpu/bundle.tar.xz", "bundle"]))?;
    println!(
        ".gpu/bundle.tar.xz: {} MB",
        std::fs::metadata(root.join(".gpu/bundle.tar.xz")).map_err(|e| e.to_string())?.len() >> 20
    );
    Ok(())
}
