//! The in-process simcloud: a simulated cloud for `capw up`, `capw bench` and
//! `capw plugin test --simcloud`, linked only when capw is built with the `simcloud` feature
//! (`make build`, `make demo` and `make test` turn it on; `make image` leaves it out).
//!
//! Without the feature the handle is a type with no values, so the code that would use a
//! running simcloud still compiles and never runs, and [`missing`] says how to get one.

#[cfg(feature = "simcloud")]
pub use capw_simcloud::{RealBoot, SimCloud, SimCloudConfig, SimCloudHandle, Timings};

#[cfg(not(feature = "simcloud"))]
pub use without::SimCloudHandle;

/// What a command that needs the in-process simcloud answers when capw was built without it.
#[cfg(not(feature = "simcloud"))]
pub fn missing(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} needs the in-process simcloud, and this capw was built without it: build capw \
         with `--features simcloud` (`make build` and `make demo` do)"
    )
}

#[cfg(not(feature = "simcloud"))]
mod without {
    use std::net::SocketAddr;

    /// A running simcloud, of which this build has none.
    pub enum SimCloudHandle {}

    impl SimCloudHandle {
        pub fn base_url(&self) -> String {
            match *self {}
        }

        pub fn addr(&self) -> SocketAddr {
            match *self {}
        }

        pub async fn shutdown(self) -> std::io::Result<()> {
            match self {}
        }
    }
}

#[cfg(all(test, not(feature = "simcloud")))]
mod tests {
    #[test]
    fn the_missing_simcloud_says_how_to_build_it() {
        let message = super::missing("capw up").to_string();
        assert!(
            message.starts_with("capw up needs the in-process simcloud"),
            "{message}"
        );
        assert!(message.contains("--features simcloud"), "{message}");
    }
}
