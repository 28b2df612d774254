package sim

import "math"

func mathLog(x float64) float64 { return math.Log(x) }
func mathExp(x float64) float64 { return math.Exp(x) }
func abs(x float64) float64     { return math.Abs(x) }
