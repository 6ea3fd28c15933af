// Package export_capw_provider_metadata is the export glue of `capw:provider/metadata`: the
// generated entry points (package wit_exports) call these functions, which answer from the
// provider package export registered.
package export_capw_provider_metadata

import (
	"capw.dev/sdk/go/internal/dispatch"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_metadata"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Describe builds the metadata from the provider's description and the points it implements.
func Describe() capw_provider_metadata.ProviderMetadata {
	m := dispatch.Current.Describe()
	points := make([]capw_provider_metadata.ExtensionPoint, 0, len(m.Points))
	for _, p := range m.Points {
		points = append(points, uint8(p))
	}
	return capw_provider_metadata.ProviderMetadata{
		Name:            m.Name,
		Version:         m.Version,
		Description:     m.Description.Description,
		ExtensionPoints: points,
		ConfigSchema:    m.ConfigSchema,
		Capabilities:    capabilities(m),
		RequestedGrants: capw_provider_metadata.RequestedGrants{
			HttpHosts: nonNil(m.RequestedGrants.HTTPHosts),
			Secrets:   nonNil(m.RequestedGrants.Secrets),
		},
	}
}

// capabilities are the control plane's when the point is declared, all off otherwise: a shape
// is declared exactly when control-plane is.
func capabilities(m dispatch.Metadata) capw_provider_metadata.Capabilities {
	if m.ControlPlane == nil {
		return capw_provider_metadata.Capabilities{
			ControlPlaneShape: witTypes.None[capw_provider_metadata.ControlPlaneShape](),
		}
	}
	return capw_provider_metadata.Capabilities{
		ControlPlaneShape:    witTypes.Some(uint8(m.ControlPlane.Shape)),
		ControlPlaneScalable: m.ControlPlane.Scalable,
		VersionUpgrades:      m.ControlPlane.VersionUpgrades,
		ChainsUpgrades:       m.ControlPlane.ChainsUpgrades,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ValidateConfig is [capw.CheckConfig] for the provider's config type and schema.
func ValidateConfig(config string) witTypes.Result[witTypes.Unit, []capw_provider_metadata.FieldError] {
	problems := dispatch.Current.ValidateConfig(config)
	if len(problems) == 0 {
		return witTypes.Ok[witTypes.Unit, []capw_provider_metadata.FieldError](witTypes.Unit{})
	}
	out := make([]capw_provider_metadata.FieldError, 0, len(problems))
	for _, p := range problems {
		out = append(out, capw_provider_metadata.FieldError{Path: p.Path, Message: p.Message})
	}
	return witTypes.Err[witTypes.Unit](out)
}
