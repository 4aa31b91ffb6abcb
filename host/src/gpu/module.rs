//! The kernels a GPU runs: the embedded PTX chosen by compute capability
//! (or a caller's), loaded once, and each function looked up once (with the
//! device's full shared memory allowed and its thread limit read).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::launch::KernelId;

/// PTX compiled for Volta and later (the driver JIT-compiles it for newer GPUs).
#[doc(hidden)]
pub const PTX_SM70: &str = include_str!("../../ptx/warpsort_sm70.ptx");
/// PTX scheduled for Hopper (compute capability 9.0 and later).
#[doc(hidden)]
pub const PTX_SM90: &str = include_str!("../../ptx/warpsort_sm90.ptx");

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
    /// (`griddepcontrol.wait`, the sm_90 PTX's merge sort).
    chains: bool,
    max_smem: u32,
}

impl Module {
    /// The embedded kernels for this GPU, and which they are.
    pub fn load_embedded(ctx: &Arc<CudaContext>) -> Result<(Self, &'static str)> {
        let (src, name) = if ctx.compute_capability()?.0 >= 9 { (PTX_SM90, "sm_90") } else { (PTX_SM70, "sm_70") };
        Ok((Self::load_ptx(ctx, src)?, name))
    }

    /// The kernels of `src` (PTX text).
    pub fn load_ptx(ctx: &Arc<CudaContext>, src: &str) -> Result<Self> {
        if src.contains('\0') {
            return Err(Error::PtxLoad("the PTX text contains a NUL byte".into()));
        }
        let module = ctx.load_module(Ptx::from_src(src)).map_err(|e| Error::PtxLoad(e.to_string()))?;
        let chains = ctx.compute_capability()?.0 >= 9 && src.contains("griddepcontrol.wait");
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
}
