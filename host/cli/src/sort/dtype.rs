//! The element types `warpsort sort` reads: their names, sizes and `.npy`
//! type strings, and [`with_dtype!`](crate::with_dtype) to run generic code
//! on the Rust type a [`DType`] names.

use clap::ValueEnum;

/// An element type of an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DType {
    /// 16-bit unsigned integers.
    U16,
    /// 16-bit signed integers.
    I16,
    /// 32-bit unsigned integers.
    U32,
    /// 32-bit signed integers.
    I32,
    /// 32-bit IEEE floats.
    F32,
    /// 64-bit unsigned integers.
    U64,
    /// 64-bit signed integers.
    I64,
    /// 64-bit IEEE floats.
    F64,
}

/// Every type, with its `.npy` type string (little-endian).
const NPY: [(DType, &str); 8] = [
    (DType::U16, "<u2"),
    (DType::I16, "<i2"),
    (DType::U32, "<u4"),
    (DType::I32, "<i4"),
    (DType::F32, "<f4"),
    (DType::U64, "<u8"),
    (DType::I64, "<i8"),
    (DType::F64, "<f8"),
];

impl DType {
    /// The name (`u16`, ..., `f64`), as `--dtype` takes it.
    pub fn name(self) -> &'static str {
        match self {
            DType::U16 => "u16",
            DType::I16 => "i16",
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::F32 => "f32",
            DType::U64 => "u64",
            DType::I64 => "i64",
            DType::F64 => "f64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::U16 | DType::I16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
        }
    }

    /// The `.npy` type string (`<f4`, ...).
    pub fn npy(self) -> &'static str {
        NPY.iter().find(|(d, _)| *d == self).map(|(_, s)| *s).expect("every type is listed")
    }

    /// The type a `.npy` type string names, or a message saying why it is
    /// not one `warpsort sort` takes.
    pub fn from_npy(descr: &str) -> Result<DType, String> {
        if let Some((d, _)) = NPY.iter().find(|(_, s)| *s == descr) {
            return Ok(*d);
        }
        let little = descr.replacen('>', "<", 1);
        if descr.starts_with('>') && NPY.iter().any(|(_, s)| *s == little) {
            return Err(format!(
                "dtype '{descr}' is big-endian: save it little-endian first (numpy: arr.astype('{little}'))"
            ));
        }
        Err(format!("unsupported dtype '{descr}': warpsort sorts {}", DType::list()))
    }

    /// The supported types, listed for messages.
    pub fn list() -> String {
        let names: Vec<&str> = NPY.iter().map(|(d, _)| d.name()).collect();
        format!("{} (little-endian)", names.join(", "))
    }
}

/// Runs `$body` with `$t` the Rust type `$dtype` names:
/// `with_dtype!(d, T => f::<T>())`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        $crate::with_dtype!(@ $dtype, $t => $body;
            U16 u16, I16 i16, U32 u32, I32 i32, F32 f32, U64 u64, I64 i64, F64 f64)
    };
    (@ $dtype:expr, $t:ident => $body:expr; $($v:ident $ty:ty),*) => {
        match $dtype {
            $($crate::sort::dtype::DType::$v => {
                type $t = $ty;
                $body
            })*
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_type_strings_round_trip() {
        for d in DType::value_variants() {
            assert_eq!(DType::from_npy(d.npy()), Ok(*d));
            assert_eq!(d.npy()[2..].parse::<usize>().unwrap(), d.size());
            assert_eq!(crate::with_dtype!(*d, T => <T as warpsort::SortKey>::NAME), d.name());
        }
        assert!(DType::from_npy(">f8").unwrap_err().contains("astype('<f8')"));
        assert!(DType::from_npy("|u1").unwrap_err().contains("unsupported dtype '|u1'"));
    }
}
