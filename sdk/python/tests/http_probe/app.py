"""The probe component's entry module."""

from probe import HttpProbe

from capw.component import export

Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks = export(HttpProbe)
