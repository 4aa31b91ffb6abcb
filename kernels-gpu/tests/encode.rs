//! The encoding of keys stored as fields (`encode::encode_keys`) run on the
//! CPU under the emulator (`arch::launch`): every layout the host builds
//! (tuples with padding, reordered fields, byte strings, a word of a wide
//! key, 16-bit keys, a base aligned to only 4 bytes), both orders: the
//! words are `Fields::pack`'s, they order as the fields do, and decoding
//! gives back every byte of the fields while the padding keeps its own;
//! and the views of keys that fill their word (`ordered::View`), a key at a
//! time and in place (`encode::map_keys`): `Fields::pack`'s words and the
//! primitive keys' mappings, both ways.
#![cfg(feature = "emulate")]

mod common;

use common::{Ptr, random};
use warpsort_kernels::arch::launch;
use warpsort_kernels::encode::{EncodedWord, encode_keys, map_keys};
use warpsort_kernels::ordered::{self, Fields, View, field, mode};

/// Two blocks of 64 threads: the kernel's grid-stride loop covers any `n`.
fn run<W: EncodedWord>(raw: *mut u8, words: *mut W, n: usize, fields: Fields, m: u32) {
    let (raw, words) = (Ptr(raw), Ptr(words));
    launch(2, 64, 0, move || {
        let (raw, words) = (raw, words);
        // SAFETY: `raw` holds `n` keys of the fields' stride, `words` `n` words.
        unsafe { encode_keys(raw.0, words.0, n as u64, fields, m) }
    });
}

/// `len` random bytes.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    random(len, seed).into_iter().map(|x| x as u8).collect()
}

/// Field `f` of the key at `key` (its bytes, little-endian, zero-extended).
fn field_bits(fields: Fields, key: &[u8], f: usize) -> u64 {
    let (at, bytes, _) = fields.field(f);
    key[at as usize..(at + bytes) as usize].iter().rev().fold(0, |v, &b| v << 8 | b as u64)
}

/// Encodes `n` keys of `fields` (at `skew` bytes past an aligned base) into
/// words under `m`, checks them against `Fields::pack`, then overwrites the
/// fields' bytes, decodes, and checks every byte of the keys (the padding
/// untouched). Returns the keys and their words.
fn round_trip<W: EncodedWord + Default>(fields: Fields, n: usize, skew: usize, m: u32, seed: u64) -> (Vec<u8>, Vec<W>) {
    let stride = fields.stride() as usize;
    // u64 storage: an 8-byte aligned base.
    let mut storage = vec![0u64; (skew + n * stride).div_ceil(8) + 1];
    let base = storage.as_mut_ptr().cast::<u8>();
    // SAFETY: the storage holds skew + n * stride bytes.
    let keys = unsafe { std::slice::from_raw_parts_mut(base.add(skew), n * stride) };
    keys.copy_from_slice(&random_bytes(n * stride, seed));
    let original = keys.to_vec();
    let mut words = vec![W::default(); n];
    run(keys.as_mut_ptr(), words.as_mut_ptr(), n, fields, m);
    let flip = if m & mode::DESCENDING != 0 { u64::MAX } else { 0 };
    for (i, w) in words.iter().enumerate() {
        let key = &original[i * stride..(i + 1) * stride];
        let want = W::from_u64(fields.pack(W::BITS, |f| field_bits(fields, key, f)) ^ flip).to_u64();
        assert_eq!(w.to_u64(), want, "key {i} of {fields:?}, mode {m}, skew {skew}");
    }
    // Garbage in the fields' bytes alone; decoding must restore them.
    for i in 0..n {
        for f in 0..fields.count() {
            let (at, bytes, _) = fields.field(f);
            let at = i * stride + at as usize;
            keys[at..at + bytes as usize].fill(0xa5);
        }
    }
    run(keys.as_mut_ptr(), words.as_mut_ptr(), n, fields, m | mode::DECODE);
    assert!(keys == &original[..], "decoded keys of {fields:?}, mode {m}, skew {skew}");
    (original, words)
}

#[test]
fn every_layout_round_trips_in_both_orders() {
    let n = 1000;
    let pair = Fields::new(8).with(0, 4, 0).with(4, 4, 0); // (u32, u32)
    let float_desc_i16 = Fields::new(8).with(0, 4, field::FLOAT | field::DESCENDING).with(4, 2, field::SIGNED);
    let three = Fields::new(8).with(4, 2, field::SIGNED).with(0, 4, field::FLOAT).with(6, 1, 0); // (i16, f32, u8)
    let bytes8 = Fields::new(8).with(0, 8, field::BIG_ENDIAN); // [u8; 8]
    let bytes16_low = Fields::new(16).with(8, 8, field::BIG_ENDIAN); // [u8; 16]'s second word
    let wide_high = Fields::new(16).with(0, 8, 0); // (u64, u32)'s first word
    for (k, m) in [0, mode::DESCENDING].into_iter().enumerate() {
        let seed = 17 * k as u64;
        for f in [pair, float_desc_i16, three, bytes8, bytes16_low, wide_high] {
            round_trip::<u64>(f, n, 0, m, seed + 1);
        }
        round_trip::<u64>(pair, n, 4, m, seed + 2); // keys 4-byte aligned only
        round_trip::<u64>(three, n, 4, m, seed + 3);
        round_trip::<u32>(Fields::new(2).with(0, 2, field::SIGNED), n, 2, m, seed + 4); // i16
        round_trip::<u32>(Fields::new(16).with(8, 4, 0), n, 0, m, seed + 5); // (u64, u32)'s second word
        round_trip::<u32>(Fields::new(4).with(0, 2, 0).with(2, 2, field::DESCENDING), n, 0, m, seed + 6);
        round_trip::<u64>(pair, 0, 0, m, seed + 7);
        round_trip::<u64>(pair, 1, 4, m, seed + 8);
    }
}

#[test]
fn words_order_as_their_fields() {
    // (f32 descending, i16): floats in reversed total order, then the i16.
    let f = Fields::new(8).with(0, 4, field::FLOAT | field::DESCENDING).with(4, 2, field::SIGNED);
    let (keys, words) = round_trip::<u64>(f, 2000, 0, 0, 5);
    let typed: Vec<(f32, i16)> = keys
        .chunks(8)
        .map(|k| (f32::from_le_bytes(k[..4].try_into().unwrap()), i16::from_le_bytes(k[4..6].try_into().unwrap())))
        .collect();
    let order = |a: &(f32, i16), b: &(f32, i16)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    for i in 1..typed.len() {
        for j in [0, i / 2, i - 1] {
            let (x, y) = (typed[i], typed[j]);
            assert_eq!(words[i].cmp(&words[j]), order(&x, &y), "{x:?} against {y:?}");
        }
    }
    // [u8; 8], descending: the reverse of memcmp.
    let (keys, words) = round_trip::<u64>(Fields::new(8).with(0, 8, field::BIG_ENDIAN), 2000, 0, mode::DESCENDING, 6);
    for i in 1..words.len() {
        let (a, b) = (&keys[i * 8..i * 8 + 8], &keys[(i - 1) * 8..i * 8]);
        assert_eq!(words[i].cmp(&words[i - 1]), b.cmp(a), "{a:?} against {b:?}");
    }
}

/// `map_keys` in place through `view` (and back when `decode`).
fn map_in_place<W: EncodedWord + Send + Sync>(keys: &mut [W], view: View, decode: bool) {
    let (n, p) = (keys.len(), Ptr(keys.as_mut_ptr()));
    launch(2, 64, 0, move || {
        let p = p;
        // SAFETY: `p` holds `n` keys.
        unsafe { map_keys(p.0, n as u64, view, decode) }
    });
}

/// Every layout that fills its word has a view, and encoding through it is
/// `Fields::pack` (then the order's inversion), a key at a time and in
/// place; decoding gives back every byte. Layouts with padding, or stored
/// wider than their word, have none.
#[test]
fn views_of_keys_that_fill_their_words_are_their_encodings() {
    let n = 1000;
    let filling = [
        Fields::new(8).with(0, 4, 0).with(4, 4, 0), // (u32, u32)
        Fields::new(8).with(4, 4, field::FLOAT).with(0, 4, field::SIGNED | field::DESCENDING), // (f32, Reverse<i32>) reordered
        Fields::new(8).with(0, 8, field::BIG_ENDIAN),                                          // [u8; 8]
        Fields::new(8).with(6, 2, field::SIGNED).with(0, 4, field::FLOAT).with(4, 1, 0).with(5, 1, field::DESCENDING),
        Fields::new(8).with(0, 8, field::FLOAT | field::DESCENDING), // Reverse<f64>
        Fields::new(8).with(0, 4, field::FLOAT).with(4, 4, field::FLOAT), // (f32, f32)
    ];
    for (k, m) in [0, mode::DESCENDING].into_iter().enumerate() {
        for (i, f) in filling.into_iter().enumerate() {
            let view = View::of_fields(f, 64, m).unwrap_or_else(|| panic!("{f:?} fills its word"));
            let keys: Vec<u64> = random(n, (10 * k + i) as u64);
            let flip = if m & mode::DESCENDING != 0 { u64::MAX } else { 0 };
            let want: Vec<u64> =
                keys.iter().map(|&x| f.pack(64, |j| field_bits(f, &x.to_le_bytes(), j)) ^ flip).collect();
            assert!(keys.iter().zip(&want).all(|(&x, &w)| view.encode(x) == w), "{f:?} mode {m}");
            let mut mapped = keys.clone();
            map_in_place(&mut mapped, view, false);
            assert!(mapped == want, "{f:?} mode {m}: in place");
            map_in_place(&mut mapped, view, true);
            assert!(mapped == keys, "{f:?} mode {m}: decoded");
        }
        let words32 =
            [Fields::new(4).with(0, 2, 0).with(2, 2, field::DESCENDING), Fields::new(4).with(0, 4, field::BIG_ENDIAN)];
        for f in words32 {
            let view = View::of_fields(f, 32, m).unwrap();
            let keys: Vec<u32> = random(n, 99 + k as u64).into_iter().map(|x| x as u32).collect();
            let flip = if m & mode::DESCENDING != 0 { u32::MAX } else { 0 };
            let want: Vec<u32> =
                keys.iter().map(|&x| f.pack(32, |j| field_bits(f, &x.to_le_bytes(), j)) as u32 ^ flip).collect();
            let mut mapped = keys.clone();
            map_in_place(&mut mapped, view, false);
            assert!(mapped == want, "{f:?} mode {m}: 32-bit, in place");
            map_in_place(&mut mapped, view, true);
            assert!(mapped == keys, "{f:?} mode {m}: 32-bit, decoded");
        }
    }
    let unfilled = [
        (Fields::new(8).with(0, 4, 0).with(4, 2, 0), 64), // (u32, u16): padding
        (Fields::new(2).with(0, 2, 0), 32),               // u16 in a u32 word
        (Fields::new(16).with(0, 8, 0), 64),              // a word of a wider key
        (Fields::new(8).with(0, 4, 0).with(4, 4, 0), 32), // 8 bytes in a 32-bit word
    ];
    for (f, bits) in unfilled {
        assert_eq!(View::of_fields(f, bits, 0), None, "{f:?} in {bits} bits");
    }
}

/// Primitive keys' views are their mappings (`ordered::map32`, `map64`),
/// both ways, for every mode, with the floats' special values.
#[test]
fn views_of_primitive_keys_are_their_mappings() {
    let specials = [0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::MIN_POSITIVE, -1.5];
    let mut keys64: Vec<u64> = random(500, 3);
    keys64.extend(specials.iter().map(|x| x.to_bits()));
    let mut keys32: Vec<u32> = keys64.iter().map(|&x| x as u32).collect();
    keys32.extend(specials.iter().map(|&x| (x as f32).to_bits()));
    for m in [0, mode::SIGNED, mode::FLOAT] {
        for m in [m, m | mode::DESCENDING] {
            let (v32, v64) = (View::of_mode(m, 32), View::of_mode(m, 64));
            assert_eq!(v32.is_identity(), m == 0);
            for &x in &keys32 {
                assert_eq!(v32.encode(x as u64), ordered::map32(x, m) as u64, "{x:#x} mode {m}");
                assert_eq!(v32.decode(v32.encode(x as u64)), x as u64);
            }
            for &x in &keys64 {
                assert_eq!(v64.encode(x), ordered::map64(x, m), "{x:#x} mode {m}");
                assert_eq!(v64.decode(v64.encode(x)), x);
            }
        }
    }
}
