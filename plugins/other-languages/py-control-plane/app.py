"""The component's entry module: componentize-py exports these five classes."""

from py_control_plane import KubeadmControlPlane

from capw.component import export

Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks = export(KubeadmControlPlane)
