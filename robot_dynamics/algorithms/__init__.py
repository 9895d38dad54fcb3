"""Layer 3: one module per published algorithm; each kernel cites the equations it implements."""
