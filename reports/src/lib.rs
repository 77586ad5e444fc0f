//! Rendering of fgvt results.
