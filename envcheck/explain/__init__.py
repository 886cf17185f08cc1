"""`envcheck explain`: well-known error texts -> causes, fixes and the checks that tell them apart."""
