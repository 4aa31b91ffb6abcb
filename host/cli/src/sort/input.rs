//! Reading the input of `warpsort sort`: a `.npy` file (its header parsed by
//! `npyz`, its data read in bulk) or a raw little-endian array of a type
//! given by `--dtype`. Every way a file can be wrong is a message.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::dtype::DType;
use super::progress::{CHUNK, Progress};

/// The first bytes of every `.npy` file.
pub const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Whether `path`'s name ends in `.npy` (any case).
pub fn named_npy(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// How the input is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A `.npy` file (header, then the data).
    Npy,
    /// Raw little-endian elements.
    Raw,
}

/// An open input whose layout was checked: the data of `len` elements of
/// `dtype` starts at `offset` and fills the rest of the file exactly.
#[derive(Debug)]
pub struct Input {
    /// The open file.
    pub file: File,
    /// `.npy` or raw.
    pub format: Format,
    /// The element type.
    pub dtype: DType,
    /// Where the data starts.
    pub offset: u64,
    /// Elements.
    pub len: usize,
}

/// Opens `path` and checks its layout; `dtype` is `--dtype` (required for a
/// raw file, for a `.npy` file it must match the header).
pub fn open(path: &Path, dtype: Option<DType>) -> Result<Input, String> {
    let mut file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let size = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
    let mut magic = [0u8; 6];
    let n = file.read(&mut magic).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let is_npy = n == magic.len() && &magic == NPY_MAGIC;
    let input = if is_npy {
        npy_layout(file, size, dtype)
    } else if named_npy(path) {
        Err("not a .npy file (it does not start with the \\x93NUMPY magic)".to_string())
    } else {
        raw_layout(file, size, dtype)
    };
    input.map_err(|e| format!("{}: {e}", path.display()))
}

/// A `.npy` file's layout from its header.
fn npy_layout(mut file: File, size: u64, dtype: Option<DType>) -> Result<Input, String> {
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    // The header is read straight from the file (no read-ahead), so the
    // file's position is then where the data starts.
    let header = npyz::NpyHeader::from_reader(&mut file).map_err(|e| format!("bad .npy header: {e}"))?;
    let offset = file.stream_position().map_err(|e| e.to_string())?;
    let descr = match header.dtype() {
        npyz::DType::Plain(t) => t.to_string(),
        other => return Err(format!("unsupported dtype {}: warpsort sorts {}", other.descr(), DType::list())),
    };
    let found = DType::from_npy(&descr)?;
    if let Some(d) = dtype.filter(|d| *d != found) {
        return Err(format!("--dtype {} does not match the .npy header's dtype {}", d.name(), found.name()));
    }
    let len = match header.shape() {
        [n] => usize::try_from(*n).map_err(|_| format!("{n} elements do not fit this machine's memory"))?,
        shape => {
            return Err(format!("the array has shape {shape:?}: warpsort sort takes 1-D arrays (numpy: arr.ravel())"));
        }
    };
    check_size(len, found, size - offset, "the .npy header says")?;
    Ok(Input { file, format: Format::Npy, dtype: found, offset, len })
}

/// A raw file's layout: `--dtype` elements filling the file.
fn raw_layout(file: File, size: u64, dtype: Option<DType>) -> Result<Input, String> {
    let Some(dtype) = dtype else {
        return Err(format!("a raw file (not .npy) needs its element type: --dtype, one of {}", DType::list()));
    };
    let el = dtype.size() as u64;
    if !size.is_multiple_of(el) {
        return Err(format!(
            "{size} bytes is not a whole number of {} elements ({el} bytes each): wrong --dtype, or a truncated file",
            dtype.name()
        ));
    }
    let len = usize::try_from(size / el).map_err(|_| "too large for this machine's memory".to_string())?;
    Ok(Input { file, format: Format::Raw, dtype, offset: 0, len })
}

/// Checks that `data` bytes hold exactly `len` elements of `dtype`.
fn check_size(len: usize, dtype: DType, data: u64, what: &str) -> Result<(), String> {
    let want = (len as u64).checked_mul(dtype.size() as u64).ok_or("the array's size overflows")?;
    match data.cmp(&want) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(format!(
            "truncated: {what} {len} {} elements ({want} bytes) but only {data} bytes follow the header",
            dtype.name()
        )),
        std::cmp::Ordering::Greater => {
            Err(format!("{what} {len} {} elements ({want} bytes) but {data} bytes follow the header", dtype.name()))
        }
    }
}

/// A `Vec` of `len` zeroed elements, or a message when the host has no room.
pub fn alloc<T: bytemuck::Pod>(len: usize) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| format!("out of host memory: {} MiB for {len} elements", (len * size_of::<T>()) >> 20))?;
    v.resize(len, T::zeroed());
    Ok(v)
}

impl Input {
    /// Reads the data (in bulk, a chunk per progress step).
    pub fn read<K: bytemuck::Pod>(mut self, progress: &Progress) -> Result<Vec<K>, String> {
        assert_eq!(size_of::<K>(), self.dtype.size(), "read as the input's type");
        let mut data = alloc::<K>(self.len)?;
        progress.phase("reading", Some((self.len * size_of::<K>()) as u64));
        self.file.seek(SeekFrom::Start(self.offset)).map_err(|e| e.to_string())?;
        for chunk in bytemuck::cast_slice_mut::<K, u8>(&mut data).chunks_mut(CHUNK) {
            self.file.read_exact(chunk).map_err(|e| format!("reading the input: {e}"))?;
            progress.inc(chunk.len());
        }
        Ok(data)
    }
}
