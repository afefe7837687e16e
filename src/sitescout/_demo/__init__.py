"""The bundled sample site (`sitescout demo`, `make demo`)."""
