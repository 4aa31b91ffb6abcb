//! `#[derive(Order)]` and `FieldOrder` against plain Rust comparisons:
//! integers by `Ord`, floats by `total_cmp`, `#[order(desc)]` reversed,
//! fields in declaration order.

use std::cmp::Ordering;

use warpsort_key::{FieldOrder, Order};

#[derive(Clone, Copy, Debug, PartialEq, Order)]
#[repr(C)]
struct Trade {
    /// Doc comments and other attributes are kept out of the order.
    venue: u16,
    pad: u16,
    #[order(desc)]
    price: f32,
    pub id: u64,
    pub(crate) tag: [u8; 4],
}

fn reference(a: &Trade, b: &Trade) -> Ordering {
    a.venue
        .cmp(&b.venue)
        .then(a.pad.cmp(&b.pad))
        .then(b.price.total_cmp(&a.price))
        .then(a.id.cmp(&b.id))
        .then(a.tag.cmp(&b.tag))
}

const SPECIAL: [f32; 8] = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.5, -1.5];

#[test]
fn the_derived_order_is_the_fields_order() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let keys: Vec<Trade> = (0..3000)
        .map(|_| {
            let r = next();
            Trade {
                venue: (r % 3) as u16,
                pad: ((r >> 2) % 2) as u16,
                price: SPECIAL[(r >> 4) as usize % 8],
                id: (r >> 8) % 4,
                tag: [(r >> 16) as u8 % 2, 0, (r >> 24) as u8 % 2, 1],
            }
        })
        .collect();
    for a in &keys[..300] {
        for b in &keys[..300] {
            assert_eq!(a.order(b), reference(a, b), "{a:?} vs {b:?}");
        }
    }
    let (mut got, mut want) = (keys.clone(), keys);
    got.sort_by(Order::order);
    want.sort_by(reference);
    assert!(got.iter().zip(&want).all(|(g, w)| reference(g, w) == Ordering::Equal));
}

#[test]
fn floats_order_as_total_cmp() {
    for a in SPECIAL {
        for b in SPECIAL {
            assert_eq!(a.field_less(&b), a.total_cmp(&b) == Ordering::Less, "{a} {b}");
            let (a, b) = (a as f64, b as f64);
            assert_eq!(a.field_less(&b), a.total_cmp(&b) == Ordering::Less, "{a} {b}");
        }
    }
}

#[test]
fn the_derive_lists_the_fields_where_they_lie() {
    use std::mem::offset_of;
    use warpsort_key::{Encoding, FieldBits, KeyField};
    let bits = |encoding, bytes, count| Some(FieldBits { encoding, bytes, count });
    assert_eq!(
        Trade::FIELDS,
        [
            KeyField { offset: offset_of!(Trade, venue), bits: bits(Encoding::Unsigned, 2, 1), desc: false },
            KeyField { offset: offset_of!(Trade, pad), bits: bits(Encoding::Unsigned, 2, 1), desc: false },
            KeyField { offset: offset_of!(Trade, price), bits: bits(Encoding::Float, 4, 1), desc: true },
            KeyField { offset: offset_of!(Trade, id), bits: bits(Encoding::Unsigned, 8, 1), desc: false },
            KeyField { offset: offset_of!(Trade, tag), bits: bits(Encoding::Unsigned, 1, 4), desc: false },
        ]
    );
    // Types given by paths and generics; a field type of the user's own has
    // no bits (the sorts then need kernels built with `less`).
    #[derive(Clone, Copy)]
    struct Mine(u32);
    impl FieldOrder for Mine {
        fn field_less(&self, o: &Self) -> bool {
            self.0 < o.0
        }
    }
    #[derive(Clone, Copy, Order)]
    #[repr(C)]
    struct Odd {
        a: core::primitive::i32,
        #[order(desc)]
        b: [[i8; 2]; 2],
        c: Mine,
    }
    assert_eq!(Odd::FIELDS[0].bits, bits(Encoding::Signed, 4, 1));
    assert_eq!((Odd::FIELDS[1].bits, Odd::FIELDS[1].offset), (bits(Encoding::Signed, 1, 4), 4));
    assert_eq!((Odd::FIELDS[2].bits, Odd::FIELDS[2].offset), (None, 8));
    // A hand-written order lists none.
    #[derive(Clone, Copy)]
    struct Hand(u32);
    impl Order for Hand {
        fn less(&self, o: &Self) -> bool {
            self.0 > o.0
        }
    }
    assert!(Hand::FIELDS.is_empty());
}
