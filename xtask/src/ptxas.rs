//! `ptxas`, the assembler: turns a PTX build into machine code for a real GPU
//! (the cubins the host embeds) and, from the same run, reports each
//! kernel's registers, shared memory, stack frame and spills. A spill in a
//! sorting kernel fails the build: the networks must live in registers.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::output;

/// `PTXAS`, `ptxas` on the PATH, or the one in the `nvidia-cuda-nvcc-cu12` wheel.
pub fn find() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PTXAS") {
        return Some(PathBuf::from(p));
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some(PathBuf::from("ptxas"));
    }
    let script = "import site,sys,os\nfor d in site.getsitepackages()+[site.getusersitepackages()]:\n p=os.path.join(d,'nvidia','cuda_nvcc','bin','ptxas')\n if os.path.exists(p): print(p); sys.exit(0)";
    let out = Command::new("python3").args(["-c", script]).output().ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!p.is_empty()).then(|| PathBuf::from(p))
}

/// The assembler's version line (`Cuda compilation tools, release ...`).
pub fn version(ptxas: &Path) -> String {
    output(Command::new(ptxas).arg("--version"))
        .ok()
        .and_then(|v| v.lines().find(|l| l.contains("release")).map(str::to_string))
        .unwrap_or_else(|| "unknown version".into())
}

#[derive(Default)]
struct Usage {
    name: String,
    regs: u32,
    smem: u32,
    stack: u32,
    spill_stores: u32,
    spill_loads: u32,
}

fn number_before(line: &str, unit: &str) -> Option<u32> {
    let i = line.find(unit)?;
    line[..i].split_whitespace().last()?.parse().ok()
}

fn parse(log: &str) -> Vec<Usage> {
    let mut out: Vec<Usage> = Vec::new();
    let mut in_kernel = false;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            out.push(Usage { name: rest.split('\'').next().unwrap_or("").to_string(), ..Default::default() });
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            // The frame lines that follow are the kernel's only when they
            // follow its own name (a callee's, e.g. a panic, come after).
            in_kernel = out.last().is_some_and(|u| rest.trim() == u.name);
        } else if let Some(u) = out.last_mut() {
            if line.contains("bytes stack frame") && in_kernel {
                u.stack = number_before(line, "bytes stack frame").unwrap_or(0);
                u.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                u.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                u.regs = number_before(line, "registers").unwrap_or(0);
                u.smem = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

/// The most a kernel under a launch bound (`config::LAUNCH_BOUNDS`) may
/// spill: the 16-byte-item block sorts at 1024 threads (64 registers) move
/// one 4-byte word through the stack, and on sm_80 the segmented block
/// kernels of `u32` keys with `u32` payloads (their compact network beside
/// the network over items) up to 12 bytes (the scatter of 16 `u32` keys a
/// thread kept four words of its loop there until it computed a tile's
/// buckets before ranking them); much more means a network left its
/// registers. [`SPILL_EXCEPTIONS`] names the kernels allowed more.
const BOUNDED_SPILL_BYTES: u32 = 12;

/// Launch-bounded kernels allowed more spill than [`BOUNDED_SPILL_BYTES`]
/// (the whole name, the bytes): the sample sort's segmented block kernel of
/// `u64` keys alone (the compact network from a known or a found span, then the
/// ranking of keys whose words tie, `span::order_runs`, beside the network
/// over keys) up to 48 bytes, where its time was measured with them
/// (`docs/PERFORMANCE.md`).
const SPILL_EXCEPTIONS: &[(&str, u32)] =
    &[(concat!(warpsort_kernels::kernel_name!(segmented_block_known), "_u64"), 48)];

/// The spill `name` may have.
fn spill_allowed(name: &str) -> u32 {
    if !bounded(name) {
        return 0;
    }
    SPILL_EXCEPTIONS.iter().find(|(k, _)| *k == name).map_or(BOUNDED_SPILL_BYTES, |e| e.1)
}

fn bounded(name: &str) -> bool {
    warpsort_kernels::config::LAUNCH_BOUNDS.iter().any(|(prefix, _)| name.starts_with(prefix))
}

/// One `ptxas` run over a whole PTX file.
pub struct Assembly {
    /// The machine code (an ELF cubin for one GPU architecture).
    pub cubin: Vec<u8>,
    /// The resource report, one line per kernel, ready to print.
    pub report: String,
    /// The first kernel that spills (beyond [`spill_allowed`]: some for a
    /// launch-bounded kernel) or keeps a stack frame, as an error message.
    pub problem: Option<String>,
}

/// Assembles the PTX file `ptx` for `arch` (`-O3`, ptxas's default, said
/// explicitly) into `cubin`, and reads the resource report of the same run.
pub fn assemble(ptxas: &Path, ptx: &Path, arch: &str, cubin: &Path) -> Result<Assembly, String> {
    let log = output(Command::new(ptxas).args(["-v", "-O3", &format!("-arch={arch}"), "-o"]).arg(cubin).arg(ptx))?;
    let usage = parse(&log);
    if usage.is_empty() {
        return Err(format!("ptxas {arch}: no kernel in its report for {}", ptx.display()));
    }
    let max_regs = usage.iter().map(|u| u.regs).max().unwrap_or(0);
    let spilling = usage.iter().filter(|u| u.spill_stores + u.spill_loads > 0).count();
    let mut report =
        format!("  ptxas {arch}: {} kernels, at most {max_regs} registers, {spilling} spilling\n", usage.len());
    // Static shared memory only: the sorts size theirs at launch (dynamic).
    for u in &usage {
        report.push_str(&format!(
            "    {:<32} {:>3} regs {:>6} B static smem {:>5} B stack {:>4}/{:<4} B spill st/ld\n",
            u.name, u.regs, u.smem, u.stack, u.spill_stores, u.spill_loads
        ));
    }
    let tolerated = |u: &Usage| bounded(&u.name) && u.spill_stores.max(u.spill_loads) <= spill_allowed(&u.name);
    let problem = if let Some(u) = usage.iter().find(|u| u.spill_stores + u.spill_loads > 0 && !tolerated(u)) {
        Some(format!(
            "{} spills on {arch} ({} B stores, {} B loads): the network must stay in registers",
            u.name, u.spill_stores, u.spill_loads
        ))
    } else {
        usage
            .iter()
            .find(|u| u.stack > 0 && !tolerated(u))
            .map(|u| format!("{} has a {} B stack frame on {arch}: an array went to local memory", u.name, u.stack))
    };
    let cubin = std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    Ok(Assembly { cubin, report, problem })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_allowed_by_kernel() {
        assert_eq!(spill_allowed("segmented_block_known_u64"), 48);
        assert_eq!(spill_allowed("segmented_block_u64"), BOUNDED_SPILL_BYTES);
        assert_eq!(spill_allowed("segmented_block_u64_u64"), BOUNDED_SPILL_BYTES);
        assert_eq!(spill_allowed("segmented_chunks_u64"), 0, "not launch-bounded");
    }
}
