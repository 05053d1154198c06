#version 330 core
// A quad over the whole view; the fragment shader casts a ray per pixel.
layout (location = 0) in vec2 a_position;

out vec2 v_ndc;

void main ()
{
  v_ndc = a_position;
  gl_Position = vec4 (a_position, 0.0, 1.0);
}
