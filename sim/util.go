package sim

import "runtime"

func runtimeGosched() { runtime.Gosched() }
