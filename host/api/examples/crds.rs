//! Prints the CRDs of every capw kind as YAML: `cargo run -p capw-api --example crds`.

fn main() -> Result<(), capw_api::CrdYamlError> {
    print!("{}", capw_api::crds_yaml()?);
    Ok(())
}
