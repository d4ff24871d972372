import LensDB

print("LensDB demo")
