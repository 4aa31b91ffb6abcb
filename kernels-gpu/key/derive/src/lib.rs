//! `#[derive(Order)]` for `warpsort-key` (re-exported there as
//! `warpsort_key::Order`): a struct with named fields ordered field by
//! field in declaration order, each ascending or, with `#[order(desc)]`,
//! descending; fields compare by `warpsort_key::FieldOrder` (integers by
//! value, floats in IEEE total order, arrays element by element), and
//! lists the fields in `Order::FIELDS` (each one's offset, how its bits
//! order, its direction) so that a sort can encode the keys. Written
//! on `proc_macro` alone: no dependencies to build, for the host or inside
//! a GPU build.

use proc_macro::{Delimiter, TokenStream, TokenTree};

/// Implements `warpsort_key::Order` for a struct with named fields: see the
/// crate's documentation.
#[proc_macro_derive(Order, attributes(order))]
pub fn derive_order(input: TokenStream) -> TokenStream {
    match expand(input) {
        Ok(code) => code.parse().expect("the generated impl parses"),
        Err(msg) => format!("::core::compile_error!({msg:?});").parse().expect("an error parses"),
    }
}

/// One field: its name, its type and whether it orders descending.
struct Field {
    name: String,
    ty: String,
    desc: bool,
}

fn expand(input: TokenStream) -> Result<String, String> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let at = tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "struct"))
        .ok_or("derive(Order) takes a struct with named fields")?;
    let name = match tokens.get(at + 1) {
        Some(TokenTree::Ident(i)) => i.to_string(),
        _ => return Err("derive(Order): the struct has no name".into()),
    };
    let body = match tokens.get(at + 2) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => {
            return Err("derive(Order) takes structs without generic parameters: write `less` by hand".into());
        }
        _ => return Err("derive(Order) takes a struct with named fields (`struct K { a: u32, .. }`)".into()),
    };
    let fields = fields(body)?;
    if fields.is_empty() {
        return Err("derive(Order): the struct has no fields to order by".into());
    }
    let mut less = String::new();
    for f in &fields {
        let (first, second) = if f.desc { ("other", "self") } else { ("self", "other") };
        less.push_str(&format!(
            "if ::warpsort_key::FieldOrder::field_less(&{first}.{n}, &{second}.{n}) {{ return true; }} \
             if ::warpsort_key::FieldOrder::field_less(&{second}.{n}, &{first}.{n}) {{ return false; }} ",
            n = f.name
        ));
    }
    let layout: Vec<String> = fields
        .iter()
        .map(|f| {
            format!("::warpsort_key::KeyField::of::<{}>(::core::mem::offset_of!({name}, {}), {})", f.ty, f.name, f.desc)
        })
        .collect();
    Ok(format!(
        "impl ::warpsort_key::Order for {name} {{ \
             #[inline(always)] fn less(&self, other: &Self) -> bool {{ {less} false }} \
             const FIELDS: &'static [::warpsort_key::KeyField] = &[{}]; \
         }}",
        layout.join(", ")
    ))
}

/// The named fields of a struct body, with their `#[order(desc)]`.
fn fields(body: TokenStream) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    let mut desc = false;
    let mut name: Option<String> = None;
    let mut in_type = false;
    let mut depth = 0i32; // `<`/`>` nesting inside a type
    let mut ty = String::new();
    let mut tokens = body.into_iter().peekable();
    while let Some(t) = tokens.next() {
        let end = in_type && depth == 0 && matches!(&t, TokenTree::Punct(p) if p.as_char() == ',');
        if in_type && !end {
            ty.push_str(&t.to_string());
            // `'a` and `::` stay one token; anything else may take a space.
            if !matches!(&t, TokenTree::Punct(p) if p.spacing() == proc_macro::Spacing::Joint) {
                ty.push(' ');
            }
        }
        match &t {
            TokenTree::Punct(p) if p.as_char() == '#' && !in_type => {
                if let Some(TokenTree::Group(g)) = tokens.next() {
                    let text = g.stream().to_string().replace(' ', "");
                    if text.starts_with("order(") {
                        desc = match text.as_str() {
                            "order(desc)" => true,
                            "order(asc)" => false,
                            _ => return Err(format!("derive(Order): unknown attribute #[{text}]: use #[order(desc)]")),
                        };
                    }
                }
            }
            TokenTree::Ident(i) if !in_type => {
                let s = i.to_string();
                if s == "pub" {
                    // `pub(crate)` and its kin: skip the group.
                    if matches!(tokens.peek(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis) {
                        tokens.next();
                    }
                } else {
                    name = Some(s);
                }
            }
            TokenTree::Punct(p) if p.as_char() == ':' && !in_type => {
                in_type = true;
                depth = 0;
            }
            TokenTree::Punct(p) if in_type && p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if in_type && p.as_char() == '>' => depth -= 1,
            TokenTree::Punct(p) if in_type && depth == 0 && p.as_char() == ',' => {
                let n = name.take().ok_or("derive(Order): a field without a name")?;
                out.push(Field { name: n, ty: std::mem::take(&mut ty), desc });
                desc = false;
                in_type = false;
            }
            _ => {}
        }
    }
    if in_type {
        out.push(Field { name: name.ok_or("derive(Order): a field without a name")?, ty, desc });
    }
    Ok(out)
}
