@_exported import LensLog
