// The tray icons, 32×32 PNGs (a ring with a dot), inline so that they need no asset copied next to
// the build.

/** Black on transparent: macOS takes it as a template image and recolours it for the menu bar. */
export const TRAY_ICON_TEMPLATE = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAABEElEQVR42u2XvQ2DMBCFP4k6BTVjUFDTwkKImgXomIMJskR2oMgISKR5lqwoGEOI7Eg86Rp45zvuzwdc+DMUQAfcgQmYJZOedeKcjkoGFk+5S+cUDNbBT6AHaiADEkmmZ704hj98Yzh9++pWxraQiGtHIz3igDH+APID+rl0jROHwv5QeI8is5wY9hScCV9+Qg3l1nnVntC3J3ZR65uKwqr2rYIrgUZSehSm6Q7nnOhE6h2cGzB+6P1R79bQi9f5hL92cEbHABoderVPGiaRMkfYt6Zg6eiIRTZWMYu0lv/Gw4HGUQeLbMTrQPAUBC/C4G0YfBAFH8VRXEbBr+MoFpIoVrLgS2k0a3kUPyYXfoYXZtHVHcHcCm8AAAAASUVORK5CYII=';

/** Blue, readable on both light and dark panels (Linux and Windows show icons as they are). */
export const TRAY_ICON_COLOR = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAABLUlEQVR42u1XOw6DMAxFYu7AnNknYGBmhWP4EqgzF8jGOTgBl+gdkNwjVKLLixRVYNJClQwMXsKz/fAvTkYsWUzJLgJfKlTE0hPLRCwzsbwgM856YE4n0MDBEigTdE4hMHiGn8RiiaUlFkMsOcTgzALj8MMRAsXHX9/hbI9wDqwfjeIXAs75g1jKHwqshK4j8RWBwXNuDlS58UgMoQQaL3zlCa1WevaaEAKTl/Oz+v2+lYq1PnfVvldwNbF0kDqgMF13VBqBHiCrGLsRy7jS+yO+belZ4HqNgAt/qxgalQE0KnrtWho+QTNARgn73hSslY5Y4GOTwAugrfx3AQQ6pQ4W+EiXQPQURC/C6G0YfRBFH8VJXEbRr+MkFpIkVrLoS2kya3kSD5Prbfg3eQOyAqF30GXeiQAAAABJRU5ErkJggg==';
