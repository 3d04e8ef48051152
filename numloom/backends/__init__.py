"""The backends: leaves that run a compiled plan (allocate, launch, copy), one module per device
kind, listed in ``core.device.BACKENDS``. Nothing in numloom imports them but through that
table (and the tools)."""
