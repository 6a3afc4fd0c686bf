// The worker's workflow bundle: every workflow type Cambio runs.
