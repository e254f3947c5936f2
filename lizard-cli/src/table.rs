//! Aligned text tables: the library's, which the capture's own table uses too.

pub use lizard_render::text::Table;
