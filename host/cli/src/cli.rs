//! The command-line surface: flags and subcommands, nothing else.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "capw",
    version,
    about = "Cluster lifecycle with sandboxed WebAssembly providers"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Default log filter when `CAPW_LOG` is not set.
    pub fn log_level(&self) -> &'static str {
        match self.global.verbose {
            0 => "warn",
            1 => "info,capw=info",
            _ => "debug",
        }
    }
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Directory of compiled provider code, reused across runs.
    /// Defaults to $XDG_CACHE_HOME/capw/compiled (or ~/.cache/capw/compiled).
    #[arg(long, global = true, env = "CAPW_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile providers in memory only.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// More log output on stderr (-v, -vv); CAPW_LOG takes a full filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl GlobalArgs {
    /// The compile cache directory in force, if any.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        if let Some(dir) = &self.cache_dir {
            return Some(dir.clone());
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("capw").join("compiled"))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with provider components.
    #[command(subcommand)]
    Plugin(PluginCommand),
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Show a component's contract version, extension points and config schema.
    Inspect(InspectArgs),
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The provider component (.wasm).
    pub file: PathBuf,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}
