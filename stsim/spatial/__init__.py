"""Spatial models: compass directions (:mod:`stsim.spatial.compass`) and geographic primitives
on WGS84 -- geodesics, compass names, geohash, H3 and S2 (:mod:`stsim.spatial.geo`)."""
