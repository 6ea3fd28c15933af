//! Tests of the example providers in other languages (`plugins/other-languages/`); see
//! `tests/other_languages.rs`. The library is empty.
