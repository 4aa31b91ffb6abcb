//! The kernels a GPU runs: one of the embedded images chosen by compute
//! capability (or a caller's PTX), loaded once, and each function looked up
//! once (with the device's full shared memory allowed and its thread limit
//! read).
//!
//! The crate embeds four images of the same kernels, built by `cargo xtask
//! build-ptx` and each compressed with zstd (`host/images/`); only the one
//! loaded is decompressed (pure Rust, `ruzstd`):
//!
//! | image | built from | loaded on |
//! | --- | --- | --- |
//! | sm_90 cubin | sm_90 PTX, by `ptxas -arch=sm_90` | compute capability 9.0 (H100, H200, GH200) |
//! | sm_80 cubin | sm_70 PTX, by `ptxas -arch=sm_80` | 8.x (A100, A10, L4, RTX 30xx/40xx) |
//! | sm_70 PTX | `llc -mcpu=sm_70` | 7.x (Volta, Turing), JIT-compiled by the driver |
//! | sm_90 PTX | `llc -mcpu=sm_90` | 10.x, 12.x and later, JIT-compiled by the driver |
//!
//! Machine code loads in milliseconds; PTX is compiled by the driver at the
//! first load on a machine (tens of seconds for these kernels) and then
//! cached (`~/.nv/ComputeCache`). When a cubin does not load for any reason
//! but a lack of memory (a driver that refuses it), the PTX of its class is
//! loaded instead, and [`crate::DeviceInfo::ptx`] says so. The driver loads
//! each function of a module at its first launch (`CUDA_MODULE_LOADING=LAZY`,
//! the default since CUDA 12.2), so a module of 230 kernels costs little
//! until they run.
//!
//! The environment variable `WARPSORT_IMAGE` overrides the choice, to time or
//! test each path on one machine: `ptx` loads the PTX of the GPU's class even
//! where a cubin exists (the JIT path, e.g. with `CUDA_CACHE_DISABLE=1`),
//! `cubin` loads the cubin with no fallback (an error where there is none),
//! `auto` (or unset, or empty) is the default.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, DriverError};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::launch::KernelId;

/// The environment variable that overrides which embedded image loads.
pub(crate) const IMAGE_VAR: &str = "WARPSORT_IMAGE";

/// One of the embedded images of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Image {
    /// PTX for Volta and later (`.target sm_70`), JIT-compiled by the driver.
    Sm70Ptx,
    /// PTX scheduled for Hopper (`.target sm_90`: `griddepcontrol`,
    /// `cp.async`), JIT-compiled by the driver.
    Sm90Ptx,
    /// Machine code for compute capability 8.x, assembled from the sm_70 PTX.
    Sm80Cubin,
    /// Machine code for compute capability 9.0, assembled from the sm_90 PTX.
    Sm90Cubin,
}

static SM70_PTX: &[u8] = include_bytes!("../../images/warpsort_sm70.ptx.zst");
static SM90_PTX: &[u8] = include_bytes!("../../images/warpsort_sm90.ptx.zst");
static SM80_CUBIN: &[u8] = include_bytes!("../../images/warpsort_sm80.cubin.zst");
static SM90_CUBIN: &[u8] = include_bytes!("../../images/warpsort_sm90.cubin.zst");

impl Image {
    /// Every embedded image.
    #[cfg(test)]
    pub const ALL: [Image; 4] = [Image::Sm70Ptx, Image::Sm90Ptx, Image::Sm80Cubin, Image::Sm90Cubin];

    /// What [`crate::DeviceInfo::ptx`] says when this image loaded.
    pub fn name(self) -> &'static str {
        match self {
            Image::Sm70Ptx => "sm_70 PTX (JIT)",
            Image::Sm90Ptx => "sm_90 PTX (JIT)",
            Image::Sm80Cubin => "sm_80 cubin",
            Image::Sm90Cubin => "sm_90 cubin",
        }
    }

    /// What [`crate::DeviceInfo::ptx`] says when this image loaded because
    /// the cubin before it did not.
    fn fallback_name(self) -> &'static str {
        match self {
            Image::Sm70Ptx => "sm_70 PTX (JIT; the sm_80 cubin did not load)",
            Image::Sm90Ptx => "sm_90 PTX (JIT; the sm_90 cubin did not load)",
            cubin => cubin.name(),
        }
    }

    /// Whether the image is PTX (else machine code).
    pub fn is_ptx(self) -> bool {
        matches!(self, Image::Sm70Ptx | Image::Sm90Ptx)
    }

    /// Whether the image holds the sm_90 build of the kernels, whose merge
    /// passes wait for their predecessors (`griddepcontrol.wait`) and so may
    /// be launched overlapping them.
    pub fn sm90_kernels(self) -> bool {
        matches!(self, Image::Sm90Ptx | Image::Sm90Cubin)
    }

    /// The image as embedded, zstd-compressed.
    pub fn compressed(self) -> &'static [u8] {
        match self {
            Image::Sm70Ptx => SM70_PTX,
            Image::Sm90Ptx => SM90_PTX,
            Image::Sm80Cubin => SM80_CUBIN,
            Image::Sm90Cubin => SM90_CUBIN,
        }
    }

    /// A PTX image's text.
    #[cfg(test)]
    fn text(self) -> String {
        assert!(self.is_ptx(), "{} is not PTX", self.name());
        let mut bytes = self.bytes().expect("the embedded images decompress");
        bytes.pop();
        String::from_utf8(bytes).expect("PTX is ASCII")
    }

    /// The image decompressed, as `cuModuleLoadData` takes it: PTX with a
    /// terminating NUL (it reads PTX as a C string), a cubin as it is.
    pub fn bytes(self) -> Result<Vec<u8>> {
        let mut out = decompress(self.compressed(), usize::from(self.is_ptx()))
            .map_err(|e| Error::PtxLoad(format!("the embedded {} does not decompress: {e}", self.name())))?;
        if self.is_ptx() {
            out.push(0);
        }
        Ok(out)
    }
}

/// Decompresses one zstd frame that states its size (as `cargo xtask
/// build-ptx` writes them) into a vector with `spare` bytes of room left,
/// checking the frame's checksum when it has one.
fn decompress(z: &[u8], spare: usize) -> std::result::Result<Vec<u8>, String> {
    let mut decoder = ruzstd::decoding::FrameDecoder::new();
    decoder.init(z).map_err(|e| e.to_string())?;
    let size = usize::try_from(decoder.content_size()).map_err(|e| e.to_string())?;
    if size == 0 {
        return Err("the frame does not state its size".into());
    }
    let mut out = Vec::with_capacity(size + spare);
    out.resize(size, 0);
    let written = decoder.decode_all(z, &mut out).map_err(|e| e.to_string())?;
    if written != size {
        return Err(format!("{written} bytes where the frame states {size}"));
    }
    if let (Some(stored), Some(computed)) = (decoder.get_checksum_from_data(), decoder.get_calculated_checksum())
        && stored != computed
    {
        return Err(format!("checksum {computed:08x} where the frame states {stored:08x}"));
    }
    Ok(out)
}

/// What `WARPSORT_IMAGE` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Preference {
    /// Machine code where there is some for the GPU, else (or when it does
    /// not load) PTX.
    Auto,
    /// The PTX of the GPU's class, even where a cubin exists.
    Ptx,
    /// The cubin, with no fallback.
    Cubin,
}

impl Preference {
    /// Reads a value of `WARPSORT_IMAGE` (`None`: unset).
    pub fn parse(value: Option<&str>) -> Result<Self> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("" | "auto") => Ok(Preference::Auto),
            Some("ptx") => Ok(Preference::Ptx),
            Some("cubin") => Ok(Preference::Cubin),
            Some(other) => Err(Error::PtxLoad(format!(
                "{IMAGE_VAR}={other} is not understood: use ptx, cubin or auto (or leave it unset)"
            ))),
        }
    }

    /// The preference the environment sets.
    pub fn from_env() -> Result<Self> {
        let value = std::env::var_os(IMAGE_VAR);
        Self::parse(value.as_ref().map(|v| v.to_str().unwrap_or("(not UTF-8)")))
    }
}

/// The images to try on a GPU of compute capability `cc`, in order: the
/// cubin where one runs on it, then the PTX of its class (sm_70 PTX up to
/// 8.x, sm_90 PTX from 9.0 on, which keeps Hopper's instructions on newer
/// GPUs).
pub(crate) fn candidates(cc: (i32, i32), pref: Preference) -> Result<Vec<Image>> {
    let (cubin, ptx) = match cc {
        (9, 0) => (Some(Image::Sm90Cubin), Image::Sm90Ptx),
        (8, _) => (Some(Image::Sm80Cubin), Image::Sm70Ptx),
        (major, _) if major >= 9 => (None, Image::Sm90Ptx),
        // Volta and Turing; older GPUs fail to load it, with the driver's reason.
        _ => (None, Image::Sm70Ptx),
    };
    Ok(match (pref, cubin) {
        (Preference::Auto, Some(c)) => vec![c, ptx],
        (Preference::Auto | Preference::Ptx, _) => vec![ptx],
        (Preference::Cubin, Some(c)) => vec![c],
        (Preference::Cubin, None) => {
            return Err(Error::PtxLoad(format!(
                "{IMAGE_VAR}=cubin, but warpsort embeds no machine code for compute capability {}.{} \
                 (cubins: 8.x and 9.0); unset it to load the PTX",
                cc.0, cc.1
            )));
        }
    })
}

/// A module load's error: out of memory as such (another image would not
/// fit either), anything else as a load failure.
fn load_error(e: DriverError, what: &str) -> Error {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY { Error::from(e) } else { Error::PtxLoad(format!("{what}: {e}")) }
}

/// A function of the module and the most threads per block it runs with.
#[derive(Clone)]
pub(crate) struct Function {
    pub f: CudaFunction,
    pub max_threads: u32,
}

/// A loaded module and the functions looked up in it.
pub(crate) struct Module {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<KernelId, Function>>,
    /// Whether launches may overlap the kernel before them: a GPU from sm_90
    /// on and kernels that wait for their predecessors
    /// (`griddepcontrol.wait`, the sm_90 build's merge sort).
    chains: bool,
    max_smem: u32,
}

impl Module {
    /// The embedded kernels for this GPU (see the module's documentation),
    /// and which image they are, for [`crate::DeviceInfo::ptx`].
    pub fn load_embedded(ctx: &Arc<CudaContext>) -> Result<(Self, &'static str)> {
        let cc = ctx.compute_capability()?;
        let images = candidates(cc, Preference::from_env()?)?;
        let mut failures = Vec::new();
        for &image in &images {
            match Self::load_image(ctx, image) {
                Ok(module) => {
                    let name = if failures.is_empty() { image.name() } else { image.fallback_name() };
                    return Ok((module, name));
                }
                Err(e @ Error::OutOfMemory { .. }) => return Err(e),
                Err(Error::PtxLoad(e)) => failures.push(e),
                Err(e) => return Err(e),
            }
        }
        Err(Error::PtxLoad(failures.join("; ")))
    }

    /// One embedded image.
    fn load_image(ctx: &Arc<CudaContext>, image: Image) -> Result<Self> {
        let bytes = image.bytes()?;
        // A PTX image ends in NUL and a cubin is an ELF image: both are what
        // cuModuleLoadData reads, which cudarc passes "binary" data to.
        let module = ctx.load_module(Ptx::from_binary(bytes)).map_err(|e| load_error(e, image.name()))?;
        let chains = ctx.compute_capability()?.0 >= 9 && image.sm90_kernels();
        Self::new(ctx, module, chains)
    }

    /// The kernels of `src` (PTX text).
    pub fn load_ptx(ctx: &Arc<CudaContext>, src: &str) -> Result<Self> {
        if src.contains('\0') {
            return Err(Error::PtxLoad("the PTX text contains a NUL byte".into()));
        }
        let module = ctx.load_module(Ptx::from_src(src)).map_err(|e| load_error(e, "PTX"))?;
        let chains = ctx.compute_capability()?.0 >= 9 && src.contains("griddepcontrol.wait");
        Self::new(ctx, module, chains)
    }

    fn new(ctx: &Arc<CudaContext>, module: Arc<CudaModule>, chains: bool) -> Result<Self> {
        let max_smem = ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32;
        Ok(Module { module, functions: Mutex::new(HashMap::new()), chains, max_smem })
    }

    /// Largest dynamic shared memory a block may opt into, bytes.
    pub fn max_smem(&self) -> u32 {
        self.max_smem
    }

    /// Whether launches may overlap their predecessors.
    pub fn chains(&self) -> bool {
        self.chains
    }

    /// A kernel, looked up once (allowed the device's full shared memory),
    /// with the most threads per block its registers allow here.
    pub fn function(&self, id: KernelId) -> Result<Function> {
        let mut map = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = map.get(&id) {
            return Ok(f.clone());
        }
        let f = self.by_name(&id.name())?;
        map.insert(id, f.clone());
        Ok(f)
    }

    /// A kernel by its name in the PTX (for [`crate::Gpu::launch_kernel`]).
    pub fn by_name(&self, name: &str) -> Result<Function> {
        let f = self.module.load_function(name).map_err(|e| Error::PtxLoad(format!("kernel {name}: {e}")))?;
        f.set_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.max_smem as i32)?;
        let max_threads = f.get_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        Ok(Function { f, max_threads })
    }

    /// Each embedded PTX image's name and text (for tests that read the
    /// kernels' signatures).
    #[cfg(test)]
    pub fn embedded_ptx() -> Vec<(&'static str, String)> {
        [Image::Sm70Ptx, Image::Sm90Ptx].into_iter().map(|i| (i.name(), i.text())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_by_compute_capability() {
        use Image::*;
        let auto = |cc| candidates(cc, Preference::Auto).unwrap();
        assert_eq!(auto((7, 0)), [Sm70Ptx]); // V100
        assert_eq!(auto((7, 5)), [Sm70Ptx]); // T4
        assert_eq!(auto((8, 0)), [Sm80Cubin, Sm70Ptx]); // A100
        assert_eq!(auto((8, 6)), [Sm80Cubin, Sm70Ptx]); // A10, RTX 30xx
        assert_eq!(auto((8, 9)), [Sm80Cubin, Sm70Ptx]); // L4, RTX 40xx
        assert_eq!(auto((9, 0)), [Sm90Cubin, Sm90Ptx]); // H100, H200
        assert_eq!(auto((10, 0)), [Sm90Ptx]); // B200
        assert_eq!(auto((12, 0)), [Sm90Ptx]); // RTX 50xx
        assert_eq!(auto((6, 1)), [Sm70Ptx]); // too old: the driver says why
        for cc in [(7, 0), (8, 0), (8, 9), (9, 0), (10, 0), (12, 0)] {
            let ptx = candidates(cc, Preference::Ptx).unwrap();
            assert_eq!(ptx.len(), 1);
            assert!(ptx[0].is_ptx());
            assert_eq!(ptx[0], *auto(cc).last().unwrap(), "the PTX fallback of {cc:?}");
        }
        assert_eq!(candidates((9, 0), Preference::Cubin).unwrap(), [Sm90Cubin]);
        assert_eq!(candidates((8, 6), Preference::Cubin).unwrap(), [Sm80Cubin]);
        for cc in [(7, 5), (10, 0), (12, 0)] {
            let e = candidates(cc, Preference::Cubin).unwrap_err();
            assert!(matches!(&e, Error::PtxLoad(m) if m.contains("no machine code")), "{e}");
        }
    }

    #[test]
    fn sm90_kernels_exactly_on_9_0_and_later() {
        for cc in [(7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)] {
            for pref in [Preference::Auto, Preference::Ptx] {
                for image in candidates(cc, pref).unwrap() {
                    assert_eq!(image.sm90_kernels(), cc.0 >= 9, "{cc:?}: {}", image.name());
                }
            }
        }
    }

    #[test]
    fn preference_from_the_variable() {
        assert_eq!(Preference::parse(None).unwrap(), Preference::Auto);
        assert_eq!(Preference::parse(Some("")).unwrap(), Preference::Auto);
        assert_eq!(Preference::parse(Some("auto")).unwrap(), Preference::Auto);
        assert_eq!(Preference::parse(Some("ptx")).unwrap(), Preference::Ptx);
        assert_eq!(Preference::parse(Some(" PTX ")).unwrap(), Preference::Ptx);
        assert_eq!(Preference::parse(Some("cubin")).unwrap(), Preference::Cubin);
        let e = Preference::parse(Some("sass")).unwrap_err();
        assert!(matches!(&e, Error::PtxLoad(m) if m.contains("WARPSORT_IMAGE=sass")), "{e}");
    }

    #[test]
    fn names_are_distinct_and_fallbacks_say_so() {
        let mut names: Vec<&str> = Image::ALL.iter().map(|i| i.name()).collect();
        names.extend([Image::Sm70Ptx.fallback_name(), Image::Sm90Ptx.fallback_name()]);
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        assert!(Image::Sm90Ptx.fallback_name().contains("did not load"));
    }

    /// `.entry` names of a PTX text.
    fn entries(ptx: &str) -> Vec<&str> {
        ptx.lines().filter_map(|l| l.strip_prefix(".visible .entry ")).map(|l| l.trim_end_matches('(')).collect()
    }

    /// Every embedded image decompresses to what it claims to be, and each
    /// cubin holds the kernels of the PTX it was assembled from.
    #[test]
    fn embedded_images_round_trip() {
        let mut kernels = Vec::new();
        for image in Image::ALL {
            let z = image.compressed();
            let t = std::time::Instant::now();
            let bytes = image.bytes().unwrap();
            let took = t.elapsed();
            println!("{}: {} -> {} bytes in {took:?}", image.name(), z.len(), bytes.len());
            assert!(bytes.len() > 4 * z.len(), "{}: compressed less than 4x", image.name());
            if image.is_ptx() {
                assert_eq!(bytes.last(), Some(&0));
                assert!(!bytes[..bytes.len() - 1].contains(&0), "{}: NUL inside the PTX", image.name());
                let text = image.text();
                let target = if image.sm90_kernels() { ".target sm_90" } else { ".target sm_70" };
                assert!(text.lines().any(|l| l == target), "{}: no `{target}`", image.name());
                // The flag `chains` follows is the text's: only the sm_90 build waits on its predecessors.
                assert_eq!(text.contains("griddepcontrol.wait"), image.sm90_kernels(), "{}", image.name());
                let names: Vec<String> = entries(&text).into_iter().map(String::from).collect();
                assert!(names.len() > 100, "{}: {} kernels", image.name(), names.len());
                kernels.push((image, names));
            } else {
                // An ELF image for NVIDIA CUDA (e_machine 190).
                assert_eq!(&bytes[..4], b"\x7fELF", "{}", image.name());
                assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 190, "{}", image.name());
            }
        }
        let texts = Module::embedded_ptx();
        assert_eq!(texts.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["sm_70 PTX (JIT)", "sm_90 PTX (JIT)"]);
        for (cubin, ptx) in [(Image::Sm80Cubin, Image::Sm70Ptx), (Image::Sm90Cubin, Image::Sm90Ptx)] {
            let code = cubin.bytes().unwrap();
            // The ELF string tables: the symbol names, NUL-terminated.
            let strings: std::collections::HashSet<&[u8]> = code.split(|&b| b == 0).collect();
            let names = &kernels.iter().find(|(i, _)| *i == ptx).unwrap().1;
            for name in names {
                assert!(
                    strings.contains(name.as_bytes()),
                    "{} lacks kernel {name} of the {}: rebuild with `cargo xtask build-ptx`",
                    cubin.name(),
                    ptx.name()
                );
            }
        }
    }

    #[test]
    fn corrupt_images_are_typed_errors() {
        let z = Image::Sm80Cubin.compressed();
        assert!(decompress(&z[..z.len() / 2], 0).is_err());
        assert!(decompress(b"not zstd", 0).is_err());
        let mut flipped = z.to_vec();
        let i = flipped.len() - 64;
        flipped[i] ^= 0x55;
        assert!(decompress(&flipped, 0).is_err(), "a changed byte must fail the frame or its checksum");
    }
}
