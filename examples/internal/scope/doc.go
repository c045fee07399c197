// Package scope is what examples/halscope and examples/halweb share: a
// triggered capture of a sampler channel's samples (Capture, Trigger,
// Edge), and its export as CSV (WriteCSV) and as an SVG plot (WriteSVG),
// byte for byte the same from either program.
package scope
