//! The `warpsort` binary's command line, where no GPU is needed.

use std::process::{Command, Output};

fn warpsort(args: &[&str]) -> Output {
    // `WARPSORT_BIN` where the tests run away from the build (a bundle on a GPU machine).
    let bin = std::env::var_os("WARPSORT_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpsort").into());
    Command::new(bin).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_and_version_print_to_stdout_and_succeed() {
    for args in [&["--help"][..], &["bench", "--help"], &["sort", "--help"], &["--version"]] {
        let out = warpsort(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{args:?}");
    }
    let sort = text(&warpsort(&["sort", "--help"]).stdout);
    assert!(sort.contains("total order") && sort.contains("NumPy instead puts every NaN last"), "{sort}");
    assert!(text(&warpsort(&["--version"]).stdout).starts_with("warpsort "));
    assert!(!text(&warpsort(&["--help"]).stdout).contains("startup-probe"), "the probe is hidden");
}

#[test]
fn an_unknown_suite_names_the_valid_ones() {
    let out = warpsort(&["bench", "--suite", "sizes,bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("'bogus'") && e.contains("copy, warp, segments") && e.contains("startup"), "{e}");
}

#[test]
fn a_bad_input_fails_before_the_gpu_and_stays() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.npy");
    std::fs::write(&p, b"\x93NUMPY garbage").unwrap();
    let out = warpsort(&["sort", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("bad .npy header"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&p).unwrap(), b"\x93NUMPY garbage");
    let raw = d.path().join("x.bin");
    std::fs::write(&raw, [1u8; 8]).unwrap();
    let out = warpsort(&["sort", raw.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--dtype"));
}

/// Without a GPU the sort fails and writes nothing; with one, it sorts.
#[test]
fn sorts_or_says_why_not() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.bin");
    let keys: Vec<u8> = [3u16, 1, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&p, &keys).unwrap();
    let out = warpsort(&["sort", "--dtype", "u16", p.to_str().unwrap()]);
    let sorted: Vec<u8> = [1u16, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
    if out.status.success() {
        assert_eq!(std::fs::read(&p).unwrap(), sorted);
    } else {
        assert!(text(&out.stderr).contains("no GPU"), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&p).unwrap(), keys);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
