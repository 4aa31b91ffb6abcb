//! `warpsort sort`'s file handling on the CPU: the sort itself is a CPU
//! stand-in (the reference sorts of `warpsort-testkit`), so these run
//! without a GPU and cover headers, dtypes, raw files, broken files, the
//! atomic replacement and the argsort output.

use std::path::{Path, PathBuf};

use npyz::WriterBuilder;
use warpsort::{HostOptions, Order, SortKey, SortOptions};
use warpsort_cli::sort::dtype::DType;
use warpsort_cli::sort::{SortArgs, Sorter, Summary, run};
use warpsort_testkit::cpu;

/// Sorts on the CPU; `fail` makes every call fail as a full GPU would.
#[derive(Clone, Copy, Default)]
struct Cpu {
    fail: bool,
}

impl Cpu {
    fn check(&self, n: usize) -> warpsort::Result<()> {
        if self.fail { Err(warpsort::Error::OutOfMemory { requested: n, free: 0 }) } else { Ok(()) }
    }

    fn positions<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<usize>> {
        self.check(keys.len())?;
        Ok(cpu::argsort(keys, opts.order)) // stable
    }
}

impl Sorter for Cpu {
    fn sort_keys<K: SortKey>(&self, keys: &mut [K], opts: &HostOptions) -> warpsort::Result<()> {
        self.check(keys.len())?;
        cpu::sort(keys, opts.sort.order);
        Ok(())
    }

    fn argsort_u32<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u32>> {
        Ok(self.positions(keys, opts)?.into_iter().map(|i| i as u32).collect())
    }

    fn argsort_u64<K: SortKey>(&self, keys: &[K], opts: &SortOptions) -> warpsort::Result<Vec<u64>> {
        Ok(self.positions(keys, opts)?.into_iter().map(|i| i as u64).collect())
    }
}

fn args(input: &Path) -> SortArgs {
    SortArgs {
        input: input.into(),
        output: None,
        dtype: None,
        descending: false,
        stable: false,
        argsort: false,
        memory_limit: None,
    }
}

fn sort_with(a: &SortArgs, sorter: Cpu) -> Result<Summary, String> {
    run(a, move || Ok(sorter))
}

fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, data: &[T]) {
    npyz::to_file_1d(path, data.iter().copied()).unwrap();
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> (String, Vec<u64>, Vec<T>) {
    let f = npyz::NpyFile::new(std::fs::File::open(path).unwrap()).unwrap();
    let (descr, shape) = (f.dtype().descr(), f.shape().to_vec());
    (descr, shape, f.into_vec().unwrap())
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The file's bytes, and the folder's entries (no temporary file left).
fn snapshot(path: &Path) -> (Vec<u8>, Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    (std::fs::read(path).unwrap(), entries)
}

#[test]
fn sorts_npy_in_place_for_every_dtype() {
    fn case<T: npyz::AutoSerialize + npyz::Deserialize + SortKey + Copy>(v: Vec<T>, descr: &str) {
        let d = dir();
        let p = d.path().join("x.npy");
        write_npy(&p, &v);
        let s = sort_with(&args(&p), Cpu::default()).unwrap();
        assert_eq!(s.len, v.len());
        let (got_descr, shape, got) = read_npy::<T>(&p);
        let mut want = v.clone();
        cpu::sort(&mut want, Order::Ascending);
        assert_eq!((got_descr.as_str(), shape, got), (descr, vec![v.len() as u64], want));
    }
    case(vec![3u16, 1, 2], "'<u2'");
    case(vec![3i16, -1, 2], "'<i2'");
    case(vec![3u32, 1, 2, 0], "'<u4'");
    case(vec![3i32, -7, 2], "'<i4'");
    case(vec![3.5f32, -1.0, f32::INFINITY, 0.0], "'<f4'");
    case(vec![u64::MAX, 1, 2], "'<u8'");
    case(vec![i64::MIN, 1, -2], "'<i8'");
    case(vec![2.5f64, -0.0, 0.0, f64::NEG_INFINITY], "'<f8'");
}

#[test]
fn floats_sort_in_total_order_and_descending_reverses_it() {
    let d = dir();
    let p = d.path().join("f.npy");
    let neg_nan = f32::from_bits(0xffc0_0000);
    write_npy(&p, &[1.0f32, f32::NAN, neg_nan, f32::NEG_INFINITY, -0.0, 0.0]);
    sort_with(&args(&p), Cpu::default()).unwrap();
    let bits: Vec<u32> = read_npy::<f32>(&p).2.iter().map(|x| x.to_bits()).collect();
    let want = [neg_nan, f32::NEG_INFINITY, -0.0, 0.0, 1.0, f32::NAN].map(f32::to_bits);
    assert_eq!(bits, want);
    sort_with(&SortArgs { descending: true, ..args(&p) }, Cpu::default()).unwrap();
    let bits: Vec<u32> = read_npy::<f32>(&p).2.iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, want.into_iter().rev().collect::<Vec<_>>());
}

#[test]
fn raw_files_need_a_dtype_and_a_whole_number_of_elements() {
    let d = dir();
    let p = d.path().join("x.bin");
    let le = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(&p, le(&[5, -3, 9])).unwrap();
    let before = snapshot(&p);
    let e = sort_with(&args(&p), Cpu::default()).unwrap_err();
    assert!(e.contains("needs its element type: --dtype"), "{e}");
    let e = sort_with(&SortArgs { dtype: Some(DType::U64), ..args(&p) }, Cpu::default()).unwrap_err();
    assert!(e.contains("12 bytes is not a whole number of u64 elements"), "{e}");
    assert_eq!(snapshot(&p), before);
    sort_with(&SortArgs { dtype: Some(DType::I32), ..args(&p) }, Cpu::default()).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), le(&[-3, 5, 9]));
}

#[test]
fn raw_to_npy_and_npy_to_raw_by_the_output_name() {
    let d = dir();
    let raw = d.path().join("x.f64");
    std::fs::write(&raw, [2.0f64, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    let npy = d.path().join("y.NPY");
    let a = SortArgs { dtype: Some(DType::F64), output: Some(npy.clone()), ..args(&raw) };
    sort_with(&a, Cpu::default()).unwrap();
    assert_eq!(read_npy::<f64>(&npy), ("'<f8'".to_string(), vec![2], vec![1.0, 2.0]));
    let back = d.path().join("z.raw");
    sort_with(&SortArgs { output: Some(back.clone()), descending: true, ..args(&npy) }, Cpu::default()).unwrap();
    assert_eq!(std::fs::read(&back).unwrap(), [2.0f64, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
    assert_eq!(std::fs::read(&raw).unwrap().len(), 16, "the input stays when -o is given");
}

#[test]
fn bad_files_are_errors_that_leave_everything_as_it_was() {
    let d = dir();
    let p = d.path().join("x.npy");
    let cases: Vec<(Vec<u8>, Option<DType>, &str)> = vec![
        (b"not numpy at all".to_vec(), None, "not a .npy file"),
        (b"\x93NUMPY\x01\x00\x10\x00{'descr': '<u4'".to_vec(), None, "bad .npy header"),
        (npy_bytes(&[1u8, 2, 3]), None, "unsupported dtype '|u1'"),
        (npy_bytes(&[1u32, 2, 3]), Some(DType::F32), "does not match"),
        (npy_bytes(&[1.0f64, 2.0])[..npy_bytes(&[1.0f64, 2.0]).len() - 3].to_vec(), None, "truncated"),
        ([npy_bytes(&[1i16, 2]), vec![0]].concat(), None, "5 bytes follow the header"),
    ];
    for (bytes, dtype, message) in cases {
        std::fs::write(&p, &bytes).unwrap();
        let before = snapshot(&p);
        let e = sort_with(&SortArgs { dtype, ..args(&p) }, Cpu::default()).unwrap_err();
        assert!(e.contains(message), "{message:?} not in {e:?}");
        assert_eq!(snapshot(&p), before);
    }
    let e = sort_with(&args(&d.path().join("missing.npy")), Cpu::default()).unwrap_err();
    assert!(e.contains("cannot open"), "{e}");
}

fn npy_bytes<T: npyz::AutoSerialize + Copy>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(&[v.len() as u64]).writer(&mut out).begin_nd().unwrap();
    w.extend(v.iter().copied()).unwrap();
    w.finish().unwrap();
    out
}

#[test]
fn two_dimensional_and_big_endian_arrays_are_refused() {
    let d = dir();
    let p = d.path().join("m.npy");
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(&[2, 2]).writer(&mut out).begin_nd().unwrap();
    w.extend([4u32, 3, 2, 1]).unwrap();
    w.finish().unwrap();
    std::fs::write(&p, &out).unwrap();
    assert!(sort_with(&args(&p), Cpu::default()).unwrap_err().contains("shape [2, 2]"));
    let mut be = Vec::new();
    let dt = npyz::DType::new_scalar(">u4".parse().unwrap());
    let mut w = npyz::WriteOptions::new().dtype(dt).shape(&[2]).writer(&mut be).begin_nd().unwrap();
    w.extend([2u32, 1]).unwrap();
    w.finish().unwrap();
    std::fs::write(&p, &be).unwrap();
    assert!(sort_with(&args(&p), Cpu::default()).unwrap_err().contains("big-endian"));
}

#[test]
fn a_failed_sort_or_missing_gpu_writes_nothing() {
    let d = dir();
    let p = d.path().join("x.npy");
    write_npy(&p, &[3u32, 1, 2]);
    let before = snapshot(&p);
    let e = sort_with(&args(&p), Cpu { fail: true }).unwrap_err();
    assert!(e.contains("out of device memory"), "{e}");
    assert_eq!(snapshot(&p), before);
    let e = run(&args(&p), || Err::<Cpu, _>("no GPU: no NVIDIA driver".to_string())).unwrap_err();
    assert!(e.contains("no GPU"), "{e}");
    assert_eq!(snapshot(&p), before);
    let out = d.path().join("no-such-dir/out.npy");
    let e = sort_with(&SortArgs { output: Some(out), ..args(&p) }, Cpu::default()).unwrap_err();
    assert!(e.contains("cannot write"), "{e}");
    assert_eq!(snapshot(&p), before);
}

#[test]
fn argsort_writes_u32_positions_as_npy_or_raw() {
    let d = dir();
    let p = d.path().join("k.npy");
    write_npy(&p, &[2.0f64, -1.0, 2.0, 0.5]);
    let out = d.path().join("p.npy");
    let a = SortArgs { argsort: true, stable: true, output: Some(out.clone()), ..args(&p) };
    sort_with(&a, Cpu::default()).unwrap();
    assert_eq!(read_npy::<u32>(&out), ("'<u4'".to_string(), vec![4], vec![1, 3, 0, 2]));
    let raw = d.path().join("p.bin");
    sort_with(&SortArgs { output: Some(raw.clone()), descending: true, ..a }, Cpu::default()).unwrap();
    let want: Vec<u8> = [0u32, 2, 3, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(std::fs::read(&raw).unwrap(), want);
    assert_eq!(read_npy::<f64>(&p).2, vec![2.0, -1.0, 2.0, 0.5], "argsort leaves the keys");
    assert!(!warpsort_cli::sort::wide_positions(u32::MAX as usize));
    assert!(warpsort_cli::sort::wide_positions(u32::MAX as usize + 1));
}

#[cfg(unix)]
#[test]
fn in_place_keeps_the_file_mode_and_sorts_through_links() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    let p = d.path().join("x.npy");
    write_npy(&p, &[3i64, 1, 2]);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = d.path().join("link.npy");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    sort_with(&args(&link), Cpu::default()).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(read_npy::<i64>(&p).2, vec![1, 2, 3]);
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2, "no temporary file left");
}

#[test]
fn empty_arrays_round_trip() {
    let d = dir();
    let p = d.path().join("e.npy");
    write_npy::<u16>(&p, &[]);
    assert_eq!(sort_with(&args(&p), Cpu::default()).unwrap().len, 0);
    assert_eq!(read_npy::<u16>(&p), ("'<u2'".to_string(), vec![0], vec![]));
}
