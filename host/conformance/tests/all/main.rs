//! The suite against real components built from source (`make plugins`): the repository's
//! providers pass it, and the broken fixtures fail it naming the rule they break.

mod broken;
mod providers;
mod support;
