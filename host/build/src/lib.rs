//! Compiles warpsort's kernels for a key type the user writes in Rust.
//!
//! From the user's `build.rs`: [`Kernels::for_key`] names a `no_std` crate
//! and a type in it that implements `warpsort_key::Order`; [`Kernels::build`]
//! generates a small package whose library is warpsort's device crate built
//! with `--cfg warpsort_custom` (its kernels instantiated for that type
//! only: the bitonic sorts, key-only and with 32-bit, 64-bit and rank
//! payloads, and the permutation kernels), compiles it with rustc's
//! `nvptx64-nvidia-cuda` backend (`-Zbuild-std=core`, fat LTO), keeps the
//! kernels with llvm-tools' `opt`, writes PTX with `llc`, and puts it in
//! `$OUT_DIR/warpsort_custom.ptx` (or [`Kernels::name`]'s) for `include_str!`. `cargo xtask
//! build-ptx` links warpsort's own kernels with the same steps ([`link`]).
//!
//! ```no_run
//! // build.rs
//! warpsort_build::Kernels::for_key("trade-key", "Trade").build_or_exit();
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use warpsort_kernels::config::CUSTOM_LAUNCH_BOUNDS;

/// Why the kernels could not be built. The message says what to do.
///
/// ```
/// let e = warpsort_build::Error::Toolchain("rustc is not nightly".into());
/// assert!(e.to_string().contains("cannot build GPU kernels"));
/// ```
#[derive(Debug)]
pub enum Error {
    /// The toolchain lacks what the device build needs: nightly, `rust-src`
    /// or `llvm-tools`.
    Toolchain(String),
    /// The key crate or its manifest could not be read.
    KeyCrate(String),
    /// A step of the build failed (its output included).
    Step(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Toolchain(m) => write!(f, "warpsort-build: the toolchain cannot build GPU kernels: {m}"),
            Error::KeyCrate(m) => write!(f, "warpsort-build: the key crate: {m}"),
            Error::Step(m) => write!(f, "warpsort-build: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// What to install for the device build, said once.
const INSTALL: &str = "use a nightly toolchain with the rust-src and llvm-tools components: \
    `rustup toolchain install nightly --component rust-src llvm-tools` and a rust-toolchain.toml \
    that names it (channel = \"nightly\", components = [\"rust-src\", \"llvm-tools\"])";

/// The kernels of one user key type, to build.
#[derive(Clone, Debug)]
pub struct Kernels {
    key_crate: PathBuf,
    key_type: String,
    cpu: String,
    name: String,
}

impl Kernels {
    /// The kernels for `key_type` (a path inside the crate: `"Trade"`,
    /// `"keys::Trade"`) of the `no_std` crate at `key_crate` (relative to
    /// the manifest of the crate whose `build.rs` this is).
    ///
    /// ```
    /// let k = warpsort_build::Kernels::for_key("trade-key", "Trade");
    /// assert_eq!(k.cpu_name(), "sm_70");
    /// ```
    pub fn for_key(key_crate: impl Into<PathBuf>, key_type: &str) -> Self {
        Kernels {
            key_crate: key_crate.into(),
            key_type: key_type.to_string(),
            cpu: "sm_70".into(),
            name: "custom".into(),
        }
    }

    /// Names the PTX file `warpsort_{name}.ptx` (default `custom`): one
    /// per key type where a build has several.
    ///
    /// ```
    /// let k = warpsort_build::Kernels::for_key("k", "Hand").name("hand");
    /// assert_eq!(k.file_name(), "warpsort_hand.ptx");
    /// ```
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// The PTX's file name in `OUT_DIR`.
    pub fn file_name(&self) -> String {
        format!("warpsort_{}.ptx", self.name)
    }

    /// The GPU architecture the PTX targets (`sm_70`, the default, loads on
    /// every GPU from Volta on; a later one lets LLVM use its instructions).
    ///
    /// ```
    /// let k = warpsort_build::Kernels::for_key("k", "K").cpu("sm_90");
    /// assert_eq!(k.cpu_name(), "sm_90");
    /// ```
    pub fn cpu(mut self, cpu: &str) -> Self {
        self.cpu = cpu.to_string();
        self
    }

    /// The architecture set by [`Kernels::cpu`].
    pub fn cpu_name(&self) -> &str {
        &self.cpu
    }

    /// Builds the PTX into `$OUT_DIR/warpsort_custom.ptx` (see
    /// [`Kernels::name`]) and returns its path; tells cargo to build again
    /// when the key crate changes.
    pub fn build(&self) -> Result<PathBuf, Error> {
        let env =
            |v: &str| std::env::var(v).map_err(|_| Error::Step(format!("{v} is not set: call this from build.rs")));
        let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
        let out = PathBuf::from(env("OUT_DIR")?);
        let key_crate = manifest.join(&self.key_crate);
        let key_crate =
            key_crate.canonicalize().map_err(|e| Error::KeyCrate(format!("{}: {e}", key_crate.display())))?;
        println!("cargo::rerun-if-changed={}", key_crate.display());
        // The device crate's source too: a path dependency can change.
        println!("cargo::rerun-if-changed={}", Path::new(warpsort_kernels::SOURCE_DIR).join("src").display());
        let ptx = self.build_in(&key_crate, &out.join("warpsort-build"))?;
        let path = out.join(self.file_name());
        std::fs::write(&path, ptx).map_err(|e| Error::Step(format!("{}: {e}", path.display())))?;
        Ok(path)
    }

    /// [`Kernels::build`], or the error printed and the build stopped.
    pub fn build_or_exit(&self) -> PathBuf {
        self.build().unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        })
    }

    /// Generates the package under `root` (one folder per name, one target
    /// folder for all: `core` builds once), compiles and links it: the PTX
    /// text.
    fn build_in(&self, key_crate: &Path, root: &Path) -> Result<String, Error> {
        let tools = Tools::find()?;
        let (package, lib) = package_name(key_crate)?;
        let dir = &root.join(&self.name);
        std::fs::create_dir_all(dir).map_err(|e| Error::Step(format!("{}: {e}", dir.display())))?;
        let key_file = dir.join("user_key.rs");
        write(
            &key_file,
            &format!("/// The key type, from warpsort-build.\npub type UserKey = ::{lib}::{};\n", self.key_type),
        )?;
        write(&dir.join("Cargo.toml"), &manifest(key_crate, &package, &lib))?;
        let target_dir = root.join("target");
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        // The outer build's settings are for the host, not this build.
        for (var, _) in std::env::vars() {
            if var.starts_with("CARGO_") && var != "CARGO_HOME" || var.starts_with("RUSTC") || var == "RUSTFLAGS" {
                cmd.env_remove(var);
            }
        }
        cmd.current_dir(dir)
            .args(["rustc", "--quiet", "--profile", "ptx", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .args(["--crate-type", "cdylib", "--target-dir"])
            .arg(&target_dir)
            .env(
                "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
                format!("-Ctarget-cpu={} -Cllvm-args=-unroll-threshold=1000 --cfg warpsort_custom", self.cpu),
            )
            .env("WARPSORT_CUSTOM_KEY", &key_file)
            .args(["--", "--emit=llvm-bc", "-Clinker=/bin/true"]);
        run(&mut cmd)?;
        let bc = target_dir.join("nvptx64-nvidia-cuda/ptx/deps/warpsort_user_kernels.bc");
        let (ptx, kernels) = link(&tools, &bc, &self.cpu, &CUSTOM_LAUNCH_BOUNDS)?;
        if kernels.is_empty() {
            return Err(Error::Step("the build defines no kernels".into()));
        }
        Ok(ptx)
    }
}

/// The generated package: warpsort's device crate as its library, the key
/// crate as a dependency, warpsort-key patched to the one the device crate
/// was built with (so that both see one `Order` trait).
fn manifest(key_crate: &Path, package: &str, lib: &str) -> String {
    let kernels = Path::new(warpsort_kernels::SOURCE_DIR);
    let key = Path::new(warpsort_key::SOURCE_DIR);
    let version = env!("CARGO_PKG_VERSION");
    format!(
        r#"[package]
name = "warpsort-user-kernels"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "{lib_rs}"

[dependencies]
warpsort-key = {{ path = "{key}", version = "{version}" }}
{lib} = {{ path = "{key_crate}", package = "{package}" }}

[patch.crates-io]
warpsort-key = {{ path = "{key}" }}

[lints.rust]
unexpected_cfgs = "allow"

[profile.ptx]
inherits = "release"
lto = "fat"
panic = "abort"
codegen-units = 1
debug = false
incremental = false

[workspace]
"#,
        lib_rs = kernels.join("src/lib.rs").display(),
        key = key.display(),
        key_crate = key_crate.display(),
    )
}

/// The key crate's package name and library name (`[package] name`, `-` as `_`).
fn package_name(key_crate: &Path) -> Result<(String, String), Error> {
    let path = key_crate.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::KeyCrate(format!("{}: {e}", path.display())))?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && let Some(v) = line.strip_prefix("name") {
            let name = v.trim_start().trim_start_matches('=').trim().trim_matches('"').to_string();
            let lib = name.replace('-', "_");
            return Ok((name, lib));
        }
    }
    Err(Error::KeyCrate(format!("{}: no [package] name", path.display())))
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::Step(format!("{}: {e}", path.display())))
}

fn run(cmd: &mut Command) -> Result<String, Error> {
    let out = cmd.output().map_err(|e| Error::Step(format!("cannot run {:?}: {e}", cmd.get_program())))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(Error::Step(format!("{:?} failed ({}):\n{text}", cmd, out.status)))
    }
}

/// llvm-tools' programs in the active toolchain, checked to exist with
/// nightly and `rust-src`.
///
/// ```
/// match warpsort_build::Tools::find() {
///     Ok(_) => println!("this toolchain builds GPU kernels"),
///     Err(e) => println!("{e}"), // names what to install
/// }
/// ```
pub struct Tools {
    bin: PathBuf,
}

impl Tools {
    /// Finds them, or says what to install.
    pub fn find() -> Result<Self, Error> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let query = |args: &[&str]| {
            run(Command::new(&rustc).args(args)).map_err(|e| Error::Toolchain(format!("{e}; {INSTALL}")))
        };
        let version = query(&["-vV"])?;
        if !version.contains("-nightly") && !version.contains("-dev") {
            let release = version.lines().find(|l| l.starts_with("release")).unwrap_or("").to_string();
            return Err(Error::Toolchain(format!("rustc is not nightly ({release}); {INSTALL}")));
        }
        let sysroot = PathBuf::from(query(&["--print", "sysroot"])?.trim());
        if !sysroot.join("lib/rustlib/src/rust/library/core").exists() {
            return Err(Error::Toolchain(format!("the rust-src component is missing; {INSTALL}")));
        }
        let host = query(&["--print", "host-tuple"])?;
        let bin = sysroot.join("lib/rustlib").join(host.trim()).join("bin");
        for tool in ["opt", "llc", "llvm-dis"] {
            if !bin.join(tool).exists() {
                return Err(Error::Toolchain(format!("{tool} is missing (the llvm-tools component); {INSTALL}")));
            }
        }
        Ok(Tools { bin })
    }

    fn tool(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }
}

/// Links one fat-LTO bitcode module of the device crate into PTX for
/// `cpu`: `opt` keeps the kernels (functions with the `ptx_kernel` calling
/// convention) and what they reach, `llc` writes PTX, and `bounds` (the
/// device crate's `config::LAUNCH_BOUNDS` or `CUSTOM_LAUNCH_BOUNDS`) become
/// `.maxnreg` lines. Returns the PTX and the kernels' names.
///
/// ```no_run
/// use std::path::Path;
/// let tools = warpsort_build::Tools::find()?;
/// let bounds = warpsort_kernels::config::LAUNCH_BOUNDS;
/// let (ptx, kernels) = warpsort_build::link(&tools, Path::new("kernels.bc"), "sm_90", &bounds)?;
/// println!("{} kernels, {} bytes of PTX", kernels.len(), ptx.len());
/// # Ok::<(), warpsort_build::Error>(())
/// ```
pub fn link(tools: &Tools, bc: &Path, cpu: &str, bounds: &[(&str, u32)]) -> Result<(String, Vec<String>), Error> {
    if !bc.exists() {
        return Err(Error::Step(format!("{} was not produced", bc.display())));
    }
    let dir = bc.parent().expect("a file has a folder");
    let ll = run(Command::new(tools.tool("llvm-dis")).arg(bc).arg("-o").arg("-"))?;
    let kernels = kernel_names(&ll);
    let internal = dir.join("internalized.bc");
    run(Command::new(tools.tool("opt"))
        .arg(bc)
        .arg("-passes=internalize,globaldce")
        .arg(format!("-internalize-public-api-list={}", kernels.join(",")))
        .arg("-o")
        .arg(&internal))?;
    let ptx = dir.join("out.ptx");
    run(Command::new(tools.tool("llc"))
        .args(["-march=nvptx64", &format!("-mcpu={cpu}"), "-O3"])
        .arg(&internal)
        .arg("-o")
        .arg(&ptx))?;
    let text = std::fs::read_to_string(&ptx).map_err(|e| Error::Step(format!("{}: {e}", ptx.display())))?;
    Ok((with_launch_bounds(&text, bounds), kernels))
}

/// The kernels (functions with the `ptx_kernel` calling convention).
fn kernel_names(ll: &str) -> Vec<String> {
    ll.lines()
        .filter_map(|l| l.strip_prefix("define ptx_kernel void @"))
        .filter_map(|l| l.split('(').next())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

/// The registers of one SM.
const REGISTERS_PER_SM: u32 = 65536;

/// Registers are given to a warp 256 at a time: a thread's count is
/// rounded up to a multiple of this.
const REGISTERS_PER_THREAD_UNIT: u32 = 8;

/// The most registers a thread may use so that `threads` threads fit one
/// SM's registers: its share, rounded down to the allocation unit (a share
/// of 85 is given as 88, and three 256-thread blocks at 88 do not fit).
///
/// ```
/// assert_eq!(warpsort_build::max_registers(1024), 64);
/// assert_eq!(warpsort_build::max_registers(768), 80);
/// assert_eq!(warpsort_build::max_registers(512), 128);
/// ```
pub fn max_registers(threads: u32) -> u32 {
    REGISTERS_PER_SM / threads / REGISTERS_PER_THREAD_UNIT * REGISTERS_PER_THREAD_UNIT
}

/// Drops llc's comments and writes launch bounds (`(name prefix,
/// threads)`) into the PTX after the parameter list of each matching
/// kernel, as `.maxnreg`: the registers a thread may use when that
/// many threads share the 64K registers of an SM ([`max_registers`]). (`.maxntid` says the same
/// more directly, but ptxas then aimed at two such blocks per SM and spilled
/// kernels that fit one.)
///
/// ```
/// let ptx = ".visible .entry block_sort_u32(\n.param .u64 a\n)\n{\n// comment\nret;\n}\n";
/// let bounds = warpsort_kernels::config::LAUNCH_BOUNDS;
/// let out = warpsort_build::with_launch_bounds(ptx, &bounds);
/// assert!(out.contains(")\n.maxnreg 64\n{") && !out.contains("comment"));
/// ```
pub fn with_launch_bounds(ptx: &str, bounds: &[(&str, u32)]) -> String {
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
            bound = bounds.iter().find(|(prefix, _)| name.starts_with(prefix)).map(|&(_, n)| n);
        } else if let (Some(n), true) = (bound, line.starts_with(')')) {
            out.push_str(&format!(".maxnreg {}\n", max_registers(n)));
            bound = None;
        }
    }
    out
}
