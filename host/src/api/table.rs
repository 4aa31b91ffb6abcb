//! Tables: ORDER BY over device columns of different types, each ascending
//! or descending, into a stable permutation, and any column (records of any
//! size included) gathered by it.

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr};
use warpsort_kernels::ordered::{Fields, field};

use crate::error::{Error, Result};
use crate::exec::wide::{Pass, check_wide};
use crate::gpu::Gpu;
use crate::key::{Field, Order};
use crate::launch::{DevPtr, ItemKind, Items};
use crate::options::SortOptions;

/// One column of a table for [`Gpu::order_by`]: a device column of a
/// [`Field`] type, in ascending or descending order (floats in IEEE total
/// order).
///
/// ```no_run
/// use warpsort::Column;
/// let gpu = warpsort::Gpu::new()?;
/// let revenue = gpu.stream().clone_htod(&[3.5f64, 1.0])?;
/// let by = Column::desc(&revenue);
/// assert_eq!(by.len(), 2);
/// # Ok::<(), warpsort::Error>(())
/// ```
pub struct Column<'a> {
    bytes: CudaView<'a, u8>,
    len: usize,
    field: (u32, u32),
}

impl<'a> Column<'a> {
    /// `values` in ascending order.
    pub fn asc<T: Field + DeviceRepr>(values: &'a CudaSlice<T>) -> Self {
        Self::new(values, T::FLAGS)
    }

    /// `values` in descending order.
    pub fn desc<T: Field + DeviceRepr>(values: &'a CudaSlice<T>) -> Self {
        Self::new(values, T::FLAGS ^ field::DESCENDING)
    }

    /// `values` in `order`.
    pub fn by<T: Field + DeviceRepr>(values: &'a CudaSlice<T>, order: Order) -> Self {
        match order {
            Order::Ascending => Self::asc(values),
            Order::Descending => Self::desc(values),
        }
    }

    fn new<T: Field + DeviceRepr>(values: &'a CudaSlice<T>, flags: u32) -> Self {
        let view = values.as_view();
        // SAFETY: fields are plain numbers: their bytes, read as bytes.
        let bytes = unsafe { view.transmute::<u8>(values.len() * T::BYTES as usize) }.expect("a column's bytes");
        Column { bytes, len: values.len(), field: (T::BYTES, flags) }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Gpu {
    /// The permutation that sorts a table's rows by `columns`, the first
    /// the most significant, each in its own order: stable (rows equal in
    /// every column keep their input order), as SQL's `ORDER BY`. Up to
    /// `u32::MAX` rows; every column as long as the first
    /// ([`Error::LengthMismatch`] else) and at least one
    /// ([`Error::BadConfig`] else). Gather any column by it with
    /// [`Gpu::gather`]. The columns are only read.
    ///
    /// Each column is one stable pass of a `(u64, u32)` key-value sort (its
    /// ordered values with the positions), from the last column to the
    /// first.
    ///
    /// ```no_run
    /// use warpsort::Column;
    /// let gpu = warpsort::Gpu::new()?;
    /// let s = gpu.stream();
    /// let (region, revenue) = (s.clone_htod(&[2u16, 1, 2])?, s.clone_htod(&[5.0f64, 7.0, 9.0])?);
    /// // ORDER BY region, revenue DESC
    /// let p = gpu.order_by(&[Column::asc(&region), Column::desc(&revenue)])?;
    /// assert_eq!(s.clone_dtoh(&p)?, [1, 2, 0]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn order_by(&self, columns: &[Column]) -> Result<CudaSlice<u32>> {
        let Some(first) = columns.first() else {
            return Err(Error::BadConfig("ORDER BY needs at least one column".into()));
        };
        let n = first.len;
        if let Some(c) = columns.iter().find(|c| c.len != n) {
            return Err(Error::LengthMismatch { keys: n, values: c.len });
        }
        let opts = SortOptions { stable: true, ..Default::default() };
        check_wide(n, &opts)?;
        let mut cols: Vec<DevPtr> = Vec::with_capacity(columns.len());
        let mut guards = Vec::with_capacity(columns.len());
        for c in columns {
            let (p, g) = self.addr(&c.bytes, "column")?;
            cols.push(p);
            guards.push(g);
        }
        // SAFETY: written by the permutation before this returns Ok.
        let out = unsafe { self.stream().alloc::<u32>(n) }?;
        if n == 0 {
            return Ok(out);
        }
        let word = |j: usize, dst: DevPtr| {
            let (bytes, flags) = columns[j].field;
            let f = Fields::new(bytes).with(0, bytes, flags);
            self.encode_keys(ItemKind::U64, f, cols[j], dst, n, 0)
        };
        let pass: Pass = &|it: &Items, o: &SortOptions| self.full_pass(it, o);
        self.permutation_by_words(n, columns.len(), &word, &opts, self.ptr(&out), pass)?;
        drop(guards);
        Ok(out)
    }

    /// `out[i] = values[positions[i]]`: a column (of any type: numbers,
    /// records of 64 bytes and more) permuted by [`Gpu::order_by`] or
    /// [`Gpu::argsort`]. `positions` must hold positions of `values`, as
    /// many ([`Error::LengthMismatch`] else).
    ///
    /// ```no_run
    /// let gpu = warpsort::Gpu::new()?;
    /// let s = gpu.stream();
    /// let keys = s.clone_htod(&[3u32, 1, 2])?;
    /// let records = s.clone_htod(&[[3u8; 64], [1; 64], [2; 64]])?;
    /// let p = gpu.argsort(&keys, &Default::default())?;
    /// assert_eq!(s.clone_dtoh(&gpu.gather(&records, &p)?)?[0], [1u8; 64]);
    /// # Ok::<(), warpsort::Error>(())
    /// ```
    pub fn gather<T: DeviceRepr>(&self, values: &CudaSlice<T>, positions: &CudaSlice<u32>) -> Result<CudaSlice<T>> {
        let n = values.len();
        if positions.len() != n {
            return Err(Error::LengthMismatch { keys: positions.len(), values: n });
        }
        let (v, _v) = self.addr(values, "values")?;
        let (p, _p) = self.addr(positions, "positions")?;
        // SAFETY: written by the gather before this returns Ok.
        let out = unsafe { self.stream().alloc::<T>(n) }?;
        if n > 0 {
            self.gather_records(v, p, self.ptr(&out), n, size_of::<T>())?;
        }
        Ok(out)
    }
}
